// DMA transfers in the SystemC core: latency, bandwidth, engine split, HBM cap, trigger cost.
#include <doctest/doctest.h>

#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
traces::DmaEvent runOneDma(const sim::MachineConfig& m, Instruction inst, traces::EventLog& log) {
  isa::Program p;
  addTensor(p, "x", {128, 8192});
  p.semaphores.push_back("q");
  signal(inst, 0, 1);
  p.instructions.push_back(inst);
  const sim::SimResult r = runTiming(p, m, &log);
  REQUIRE(log.dmas.size() == 1);
  CHECK(r.totals.dmaTransfers == 1);
  return log.dmas[0];
}
}  // namespace

TEST_CASE("a tiny DMA is latency-bound: ~1.3 us from trigger to first byte (D2)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  traces::EventLog log;
  const traces::DmaEvent e =
      runOneDma(m, dma(0, Engine::Sync, sbuf(0, 1, 0, 1), hbm(0, 1, 1)), log);
  CHECK(e.issue.ns() == 0.0);
  CHECK(e.start.ns() == doctest::Approx(1300.0));
  CHECK(e.end.ns() ==
        doctest::Approx(1300.0 + 64 / 23.0));  // one descriptor: at least 64 B of time
  CHECK(e.bytes == 4);
  // The trigger holds the Sync engine for the hwdge time (A2/D3).
  REQUIRE(log.instructions.size() == 1);
  CHECK(log.instructions[0].end.ns() == doctest::Approx(600.0));
}

TEST_CASE("32 KiB on one DMA engine takes ~1416 ns of transfer on trn2 (D1)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  traces::EventLog log;
  const traces::DmaEvent e =
      runOneDma(m, dma(0, Engine::Sync, sbuf(0, 1, 0, 8192), hbm(0, 1, 8192)), log);
  CHECK(e.dmaEngines == 1);
  CHECK(e.end.ns() - e.start.ns() == doctest::Approx(32768 / 23.0));
  CHECK((e.end.ns() - e.start.ns()) / 1416.0 == doctest::Approx(1.0).epsilon(0.02));
}

TEST_CASE("a large DMA reaches the configured per-engine bandwidth x 16 on trn1") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  traces::EventLog log;
  const traces::DmaEvent e =
      runOneDma(m, dma(0, Engine::Sync, sbuf(0, 128, 0, 8192), hbm(0, 128, 8192)), log);
  CHECK(e.dmaEngines == 16);
  CHECK(e.descriptors == 128);
  const double gbps = static_cast<double>(e.bytes) / (e.end.ns() - e.start.ns());
  CHECK(gbps == doctest::Approx(16 * 17.0).epsilon(0.01));
  CHECK(gbps < 16 * 17.0);
}

TEST_CASE("the HBM share caps a large DMA - SBUF-to-SBUF is not capped") {
  const sim::MachineConfig m = sim::loadMachine("trn2", {"hbm_gbps=150"});
  traces::EventLog log;
  const traces::DmaEvent e =
      runOneDma(m, dma(0, Engine::Sync, sbuf(0, 128, 0, 8192), hbm(0, 128, 8192)), log);
  CHECK(static_cast<double>(e.bytes) / (e.end.ns() - e.start.ns()) ==
        doctest::Approx(150.0).epsilon(0.001));
  CHECK(e.hbmBytes == 128 * 8192 * 4);
  traces::EventLog log2;
  const traces::DmaEvent s =
      runOneDma(m, dma(0, Engine::Sync, sbuf(0, 128, 0, 8192), sbuf(0, 128, 65536, 8192)), log2);
  CHECK(s.hbmBytes == 0);
  CHECK(static_cast<double>(s.bytes) / (s.end.ns() - s.start.ns()) > 300.0);
}

TEST_CASE("the completion signal releases a waiter when the last descriptor lands") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  addTensor(p, "x", {128, 1024});
  const int32_t q = addSemaphore(p, "q3");
  Instruction d = dma(3, Engine::Sync, sbuf(0, 128, 0, 1024), hbm(0, 128, 1024));
  signal(d, q, 16);
  p.instructions.push_back(d);
  Instruction use = copy(Engine::Vector, sbuf(0, 128, 8192, 1024), sbuf(0, 128, 0, 1024));
  waitFor(use, q, 16);
  p.instructions.push_back(use);
  traces::EventLog log;
  const sim::SimResult r = runTiming(p, m, &log);
  REQUIRE(log.dmas.size() == 1);
  const double landed = log.dmas[0].end.ns();
  // 16 engines x 23 B/ns exceed the core's 362.5 GB/s HBM share, which binds.
  CHECK(landed == doctest::Approx(1300 + 128 * 1024 * 4 / 362.5).epsilon(0.001));
  const auto& v = log.instructions[1].index == 1 ? log.instructions[1] : log.instructions[0];
  CHECK(v.start.ns() == doctest::Approx(landed));
  CHECK(v.waitedOnInstruction == 0);
  CHECK(r.totals.dmaBytes == 128 * 1024 * 4);
  CHECK(r.totals.hbmBytes == 128 * 1024 * 4);
  CHECK(r.totals.dmaActive.ns() == doctest::Approx(landed - 1300));
}

TEST_CASE("DMAs triggered from Sync wait their turn: one trigger at a time on the issuing engine") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  addTensor(p, "x", {4, 16});
  for (int i = 0; i < 4; ++i)
    p.instructions.push_back(
        dma(i, Engine::Sync, sbuf(i, 1, 0, 16), hbm(0, 1, 16, Dtype::Fp32, 16 * i)));
  traces::EventLog log;
  runTiming(p, m, &log);
  REQUIRE(log.dmas.size() == 4);
  for (const traces::DmaEvent& e : log.dmas)
    CHECK(e.start.ns() == doctest::Approx(e.issue.ns() + 1300));
  double lastIssue = -1;
  for (const traces::DmaEvent& e : log.dmas) lastIssue = std::max(lastIssue, e.issue.ns());
  CHECK(lastIssue == doctest::Approx(3 * 600.0));
}

TEST_CASE("counters: PE utilization, throttle, DMA GB/s and pending DMAs are sampled") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  addTensor(p, "x", {128, 1024});
  p.instructions.push_back(dma(0, Engine::Sync, sbuf(0, 128, 0, 1024), hbm(0, 128, 1024)));
  p.instructions.push_back(matmul(psum(0, 128, 0, 512), sbuf(0, 128, 8192, 128, Dtype::Bf16),
                                  sbuf(0, 128, 16384, 512, Dtype::Bf16)));
  traces::EventLog log;
  const sim::SimResult r = runTiming(p, m, &log);
  CHECK(r.totals.hostSeconds > 0);
  double maxGbps = 0, maxPending = 0, firstThrottle = -1, peakPe = 0;
  for (const traces::CounterSample& c : log.counters) {
    if (c.counter == traces::Counter::DmaGbps) maxGbps = std::max(maxGbps, c.value);
    if (c.counter == traces::Counter::PendingDmas) maxPending = std::max(maxPending, c.value);
    if (c.counter == traces::Counter::Throttle && firstThrottle < 0) firstThrottle = c.value;
    if (c.counter == traces::Counter::PeUtilization) peakPe = std::max(peakPe, c.value);
  }
  CHECK(maxPending == 1);
  CHECK(maxGbps == doctest::Approx(362.5).epsilon(0.001));
  CHECK(firstThrottle == doctest::Approx(50.0));
  // The first matmul: held back by the throttle for 186.7 ns, then its exposed LoadStationary
  // (13.3 ns) and 213.3 ns of work at full rate: utilization over that span.
  CHECK(peakPe == doctest::Approx(100.0 * 512 / (32 + 512)).epsilon(0.001));
  CHECK(log.counters.back().at.ns() <= r.totals.total.ns());
}

TEST_CASE("a queue signals completions in posting order even when a later transfer lands first") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  addTensor(p, "x", {2, 65536});
  const int32_t q3 = addSemaphore(p, "q3");
  // C on queue 4 occupies engine 1 (partition 8), so A's part there moves at half rate; B
  // (partition 16, engine 2) lands long before A.
  Instruction c = dma(4, Engine::Sync, sbuf(8, 1, 0, 32768), hbm(0, 1, 32768));
  Instruction a = dma(3, Engine::Sync, sbuf(0, 16, 0, 1024), hbm(0, 16, 1024));
  signal(a, q3, 1);
  Instruction b = dma(3, Engine::Sync, sbuf(16, 1, 0, 16), hbm(0, 1, 16));
  signal(b, q3, 1);
  Instruction firstOnly = copy(Engine::Vector, sbuf(32, 1, 0, 16), sbuf(16, 1, 0, 16));
  waitFor(firstOnly, q3, 1);
  Instruction both = copy(Engine::Scalar, sbuf(64, 1, 0, 16), sbuf(16, 1, 0, 16));
  waitFor(both, q3, 2);
  p.instructions = {c, a, b, firstOnly, both};
  traces::EventLog log;
  runTiming(p, m, &log);
  REQUIRE(log.dmas.size() == 3);
  double aEnd = 0, bEnd = 0;
  for (const traces::DmaEvent& e : log.dmas) {
    if (e.index == 1) aEnd = e.end.ns();
    if (e.index == 2) bEnd = e.end.ns();
  }
  CHECK(bEnd == doctest::Approx(aEnd));
  for (const traces::InstructionEvent& e : log.instructions) {
    if (e.index == 3) CHECK(e.start.ns() == doctest::Approx(aEnd));
    if (e.index == 4) CHECK(e.start.ns() == doctest::Approx(aEnd));
  }
}
