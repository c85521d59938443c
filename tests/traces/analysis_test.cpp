// Trace analyses on hand-built runs with known answers: semaphore releases, what-if estimates,
// engine time split, DMA efficiency, phases.
#include <doctest/doctest.h>

#include "fixture.h"
#include "synthetic.h"
#include "traces/chrome_trace.h"
#include "traces/dependency_graph.h"
#include "traces/dma_efficiency.h"
#include "traces/engine_time.h"
#include "traces/phases.h"
#include "traces/report.h"
#include "traces/semaphore_releases.h"

using namespace neuronsim;
using R = traces::Resource;

namespace {

traces::TraceModel saved(const isa::Program& program, const traces::EventLog& log,
                         const traces::MachineFacts& machine = {}) {
  fixture::TempFile file("analysis.json");
  traces::writeChromeTrace(file.str(), program, log, fixture::summary(), machine);
  return traces::loadTraceModel(file.str());
}

double whatIf(const std::vector<traces::WhatIf>& all, R resource) {
  for (const auto& w : all)
    if (w.resource == resource) return w.endNs;
  return -1;
}

const traces::EngineTime& engine(const std::vector<traces::EngineTime>& all,
                                 const std::string& name) {
  for (const auto& t : all)
    if (t.engine == name) return t;
  FAIL("no engine " << name);
  return all.front();
}

isa::Instruction signalling(isa::Engine engine, int32_t sem, isa::SignalAt at) {
  isa::Instruction inst;
  inst.engine = engine;
  inst.opcode = isa::Opcode::TensorCopy;
  inst.signals = {{sem, at, 1}};
  return inst;
}

}  // namespace

TEST_CASE(
    "a wait is released by the increment that first reaches its value, Complete after the pipeline "
    "latency") {
  isa::Program p;
  p.semaphores = {"s"};
  p.instructions = {
      signalling(isa::Engine::Vector, 0, isa::SignalAt::Complete),   // #0 [0,100] lands 150
      signalling(isa::Engine::Vector, 0, isa::SignalAt::Complete),   // #1 [100,200] lands 250
      signalling(isa::Engine::GpSimd, 0, isa::SignalAt::Complete)};  // #2 [0,300] lands 300
  for (int64_t value : {1, 2, 3, 4}) {
    isa::Instruction wait;
    wait.engine = isa::Engine::Scalar;
    wait.waits = {{0, value}};
    p.instructions.push_back(wait);
  }
  traces::EventLog log;
  log.instruction(fixture::inst(0, isa::Engine::Vector, isa::Opcode::TensorCopy, 0, 0, 100));
  log.instruction(fixture::inst(1, isa::Engine::Vector, isa::Opcode::TensorCopy, 100, 100, 200));
  log.instruction(fixture::inst(2, isa::Engine::GpSimd, isa::Opcode::TensorCopy, 0, 0, 300));
  for (int64_t i = 3; i < 7; ++i)
    log.instruction(fixture::inst(i, isa::Engine::Scalar, isa::Opcode::TensorCopy, 0, 400, 400));
  traces::MachineFacts machine;
  machine.pipelineLatencyNs[static_cast<size_t>(isa::Engine::Vector)] = 50;
  const auto releases = traces::semaphoreReleases(p, log, machine);
  REQUIRE(releases.size() == 7);
  CHECK(releases[0].empty());
  const std::vector<std::pair<int64_t, double>> expected{{0, 150}, {1, 250}, {2, 300}, {-1, 0}};
  for (size_t k = 0; k < expected.size(); ++k) {
    CAPTURE(k);
    REQUIRE(releases[3 + k].size() == 1);
    CHECK(releases[3 + k][0].producer == expected[k].first);
    CHECK(releases[3 + k][0].ns == doctest::Approx(expected[k].second));
  }
  // a Read signal lands at its instruction's start: #2 now counts first
  p.instructions[2].signals[0].at = isa::SignalAt::Read;
  const auto early = traces::semaphoreReleases(p, log, machine);
  CHECK(early[3][0].producer == 2);
  CHECK(early[3][0].ns == doctest::Approx(0));
}

TEST_CASE("the trace records every wait's releaser and time, and they survive the file") {
  const auto model = saved(fixture::program(), fixture::log());
  std::vector<std::pair<int64_t, std::pair<int64_t, double>>> seen;
  for (const auto& s : model.spans) {
    if (s.isDma) continue;
    CHECK(s.waitsKnown);
    for (const auto& w : s.waits) seen.push_back({s.index, {w.producer, w.ns}});
  }
  // add waits on q0's load landing (2400), matmul on the add (3000), store on the matmul (3500)
  const std::vector<std::pair<int64_t, std::pair<int64_t, double>>> expected{
      {1, {0, 2400}}, {2, {1, 3000}}, {3, {2, 3500}}};
  CHECK(seen == expected);
}

TEST_CASE(
    "replaying the dependency graph gives back the recorded end; what-if removes one resource") {
  const auto model = saved(fixture::program(), fixture::log());
  const traces::DependencyGraph graph(model);
  REQUIRE(graph.acyclic());
  CHECK(graph.replayedEndNs() == doctest::Approx(5000));
  const auto all = graph.whatIfs();
  // fixed latency 2600 (two DMA latencies), DMA 1100, vector 600, tensor 500, triggers 200 on the
  // path
  CHECK(whatIf(all, R::FixedLatency) == doctest::Approx(2400));
  CHECK(whatIf(all, R::Dma) == doctest::Approx(3900));
  CHECK(whatIf(all, R::Vector) == doctest::Approx(4400));
  CHECK(whatIf(all, R::Tensor) == doctest::Approx(4500));
  CHECK(whatIf(all, R::DmaTrigger) == doctest::Approx(4800));
  CHECK(whatIf(all, R::Scalar) == -1);  // no scalar work: no row
  CHECK(all.front().resource == R::FixedLatency);
  CHECK(traces::verdictText(graph.criticalPath(), all)
            .find("fixed latency infinitely fast would take 2.400 us") != std::string::npos);
}

TEST_CASE("what-if only counts an engine's time where it is on the path: parallel work hides") {
  // vector [0,1000] and gpsimd [0,400] both feed tensor [1000,1100]: removing gpsimd saves nothing.
  isa::Program p;
  p.semaphores = {"v", "g"};
  p.instructions = {signalling(isa::Engine::Vector, 0, isa::SignalAt::Complete),
                    signalling(isa::Engine::GpSimd, 1, isa::SignalAt::Complete)};
  isa::Instruction mm;
  mm.engine = isa::Engine::Tensor;
  mm.opcode = isa::Opcode::NcMatmul;
  mm.waits = {{0, 1}, {1, 1}};
  p.instructions.push_back(mm);
  traces::EventLog log;
  log.instruction(fixture::inst(0, isa::Engine::Vector, isa::Opcode::TensorCopy, 0, 0, 1000));
  log.instruction(fixture::inst(1, isa::Engine::GpSimd, isa::Opcode::TensorCopy, 0, 0, 400));
  log.instruction(fixture::waiting(
      fixture::inst(2, isa::Engine::Tensor, isa::Opcode::NcMatmul, 0, 1000, 1100), 0, 0));
  const traces::DependencyGraph graph(saved(p, log));
  const auto all = graph.whatIfs();
  CHECK(whatIf(all, R::GpSimd) == doctest::Approx(1100));
  // without vector time the matmul still waits for gpsimd's 400 ns
  CHECK(whatIf(all, R::Vector) == doctest::Approx(500));
  CHECK(whatIf(all, R::Tensor) == doctest::Approx(1000));
  const auto path = graph.criticalPath();
  CHECK(path.bound == R::Vector);
  CHECK(path.resourceNs[static_cast<size_t>(R::GpSimd)] == 0);
}

TEST_CASE(
    "engine time splits waits into dependency (producer running) and starved (producer not "
    "started)") {
  const auto all = traces::engineTimes(saved(fixture::program(), fixture::log()), 5000);
  // vector: busy 600; waited 0..2400 on q0's load, issued at 100: starved 100, dependency 2300;
  // done 2000
  const auto& vector = engine(all, "vector");
  CHECK(vector.busyNs == doctest::Approx(600));
  CHECK(vector.starvedNs == doctest::Approx(100));
  CHECK(vector.dependencyNs == doctest::Approx(2300));
  CHECK(vector.doneNs == doctest::Approx(2000));
  REQUIRE(vector.producers.size() == 1);
  CHECK(vector.producers[0].producer == "dma.q0");
  CHECK(vector.producers[0].longestIndex == 1);
  // tensor waited 0..3000 on the add, which started at 2400
  const auto& tensor = engine(all, "tensor");
  CHECK(tensor.starvedNs == doctest::Approx(2400));
  CHECK(tensor.dependencyNs == doctest::Approx(600));
  CHECK(tensor.producers[0].producer == "vector");
  // every engine's parts add up to the run
  for (const auto& t : all) {
    CAPTURE(t.engine);
    CHECK(t.busyNs + t.dependencyNs + t.starvedNs + t.internalNs + t.doneNs ==
          doctest::Approx(5000));
  }
  CHECK(engine(all, "scalar").doneNs == doctest::Approx(5000));
}

TEST_CASE("DMA efficiency: achieved against peak, sizes, triggers, queue occupancy") {
  const auto model = saved(fixture::program(), fixture::log(), fixture::machine(true));
  const auto dma = traces::dmaEfficiency(model);
  REQUIRE(dma.peakKnown);
  CHECK(dma.transfers == 2);
  // peak 16 engines x 23 B/ns = 368, capped by HBM 362.5; q0 moves 65536 B in 1000 ns = 18.1%
  CHECK(traces::transferPeakGbps(model.spans[4], model.machine) == doctest::Approx(362.5));
  CHECK(dma.efficiency[1].transfers == 1);  // 10-25%
  CHECK(dma.efficiency[1].bytes == 65536);
  CHECK(dma.sizes[1].transfers == 1);  // 512 B per partition: 512-2K
  CHECK(dma.sizes[2].transfers == 1);  // 4096: 2K-8K
  REQUIRE(dma.triggers.size() == 1);
  CHECK(dma.triggers[0].engine == "sync");
  CHECK(dma.triggers[0].triggers == 2);
  CHECK(dma.triggers[0].ns == doctest::Approx(200));
  REQUIRE(dma.queues.size() == 2);
  CHECK(dma.queues[0].activeNs == doctest::Approx(1000));
  CHECK(dma.queues[0].gbps() == doctest::Approx(65.536));
  CHECK(dma.queues[1].latencyNs == doctest::Approx(1300));
  CHECK(model.spans[dma.slowest.front()].track == "dma.q0");
  // without the machine the peak is unknown and no efficiency is claimed
  CHECK_FALSE(traces::dmaEfficiency(saved(fixture::program(), fixture::log())).peakKnown);
}

TEST_CASE(
    "phases group events by note, transfers inherit their trigger's, and own critical-path time") {
  auto p = fixture::program();
  const std::vector<std::string> notes{"load", "compute", "compute", "store"};
  for (size_t i = 0; i < notes.size(); ++i) p.instructions[i].note = notes[i];
  const auto model = saved(p, fixture::log());
  const auto phases = traces::phaseTimes(model, traces::criticalPath(model));
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].name == "load");
  CHECK(phases[0].instructions == 1);
  CHECK(phases[0].transfers == 1);
  CHECK(phases[0].criticalNs == doctest::Approx(2400));
  CHECK(phases[1].name == "compute");
  CHECK(phases[1].instructions == 2);
  CHECK(phases[1].firstStartNs == doctest::Approx(2400));
  CHECK(phases[1].lastEndNs == doctest::Approx(3500));
  CHECK(phases[1].busyNs[static_cast<size_t>(R::Tensor)] == doctest::Approx(500));
  CHECK(phases[2].name == "store");
  CHECK(phases[2].criticalNs == doctest::Approx(1500));
  CHECK(traces::phaseTimes(saved(fixture::program(), fixture::log()), {}).empty());
}

TEST_CASE("a many-queue load pipeline is DMA-bound in the critical path and the what-if") {
  // synthetic: 4 load queues of 5.7 us transfers feed 213 ns matmuls and 533 ns copies
  const auto run = synthetic::makeRun(200);
  fixture::TempFile file("dma_bound.json");
  traces::writeChromeTrace(file.str(), run.program, run.log, run.summary);
  const traces::DependencyGraph graph(traces::loadTraceModel(file.str()));
  const auto path = graph.criticalPath();
  CHECK(path.bound == R::Dma);
  double sum = 0;
  for (double ns : path.resourceNs) sum += ns;
  CHECK(sum == doctest::Approx(path.totalNs));
  CHECK(graph.replayedEndNs() == doctest::Approx(path.totalNs));
  const auto all = graph.whatIfs();
  CHECK(all.front().resource == R::Dma);
  CHECK(all.front().endNs < 0.5 * path.totalNs);
}

TEST_CASE("the phases table widens to 40 characters and keeps a longer note's end (file:line)") {
  auto p = fixture::program();
  const std::string longPath = "/home/someone/projects/kernels/attention/softmax_kernel.py:57";
  const std::vector<std::string> notes{"/work/examples/softmax.py:35", longPath, longPath, "store"};
  for (size_t i = 0; i < notes.size(); ++i) p.instructions[i].note = notes[i];
  const std::string text = traces::reportText(saved(p, fixture::log()));
  const std::string phases = text.substr(text.find("phases (instruction notes)"));
  CHECK(phases.find("\n  /work/examples/softmax.py:35 ") != std::string::npos);
  const std::string shown = "..." + longPath.substr(longPath.size() - 37);
  CHECK(shown.size() == 40);
  CHECK(phases.find("\n  " + shown + " ") != std::string::npos);
  CHECK(phases.find("\n  store" + std::string(35, ' ') + " ") != std::string::npos);
}
