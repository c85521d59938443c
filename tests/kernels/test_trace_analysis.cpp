// Trace analysis on simulated runs: programs whose bound is known by construction, and the
// traces of every library kernel (graph explains each engine start, what-if is consistent).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "kernels/builder/kernel_builder.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/trace_machine.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "traces/dependency_graph.h"
#include "traces/phases.h"
#include "traces/report.h"

using neuronsim::isa::AluOp;
using neuronsim::isa::Dtype;
using neuronsim::kernels::KernelBuilder;
using neuronsim::kernels::Tile;
using neuronsim::traces::Resource;
namespace traces = neuronsim::traces;
namespace kernels = neuronsim::kernels;
namespace sim = neuronsim::sim;

namespace {

/// Simulates `program` on `machine` (timing only) and returns its trace model with the machine
/// facts.
traces::TraceModel simulated(const neuronsim::isa::Program& program,
                             const sim::MachineConfig& machine) {
  traces::EventLog log;
  sim::SimOptions options;
  options.timingOnly = true;
  options.sink = &log;
  sim::simulate(program, machine, nullptr, options);
  return traces::traceModel(program, log, kernels::traceMachine(machine));
}

double whatIf(const std::vector<traces::WhatIf>& all, Resource resource) {
  for (const auto& w : all)
    if (w.resource == resource) return w.endNs;
  return -1;
}

/// `queues` loads of [128, columns] fp32 on queues 0..queues-1, each reduced over its first 8
/// columns.
neuronsim::isa::Program manyQueueLoads(int queues, int64_t columns) {
  KernelBuilder b("many_queue_loads", neuronsim::isa::Geometry{});
  auto x = b.input("x", {128, queues * columns}, Dtype::Fp32);
  auto out = b.output("out", {128, queues}, Dtype::Fp32);
  Tile sums = b.sbuf({128, queues}, Dtype::Fp32, "sums");
  for (int q = 0; q < queues; ++q) {
    b.setNote(fmt::format("load {}", q));
    Tile tile = b.sbuf({128, columns}, Dtype::Fp32, "tile");
    b.dmaCopy(tile, x.slice(1, q * columns, (q + 1) * columns), {.queue = q});
    b.setNote("reduce");
    b.tensorReduce(sums.slice(0, q, q + 1), tile.slice(0, 0, 8), AluOp::Add);
  }
  b.setNote("store");
  b.dmaCopy(out, sums, {.queue = 0});
  return b.finish();
}

/// One small load, then `steps` dependent full-tile vector ops, then a store.
neuronsim::isa::Program vectorChain(int steps) {
  KernelBuilder b("vector_chain", neuronsim::isa::Geometry{});
  auto x = b.input("x", {128, 512}, Dtype::Fp32);
  auto out = b.output("out", {128, 512}, Dtype::Fp32);
  Tile t = b.sbuf({128, 512}, Dtype::Fp32, "t");
  b.dmaCopy(t, x);
  for (int i = 0; i < steps; ++i) b.tensorScalar(t, t, AluOp::Multiply, 1.0f);
  b.dmaCopy(out, t);
  return b.finish();
}

}  // namespace

TEST_CASE("trace analysis: loads spread over 16 queues are DMA-bound, though no single queue is") {
  const sim::MachineConfig machine = sim::loadMachine("trn2");
  const auto model = simulated(manyQueueLoads(16, 2048), machine);
  const traces::DependencyGraph graph(model);
  const auto path = graph.criticalPath();
  CHECK(path.bound == Resource::Dma);
  CHECK(path.resourceNs[static_cast<size_t>(Resource::Dma)] > 0.5 * path.totalNs);
  const auto all = graph.whatIfs();
  REQUIRE(!all.empty());
  CHECK(all.front().resource == Resource::Dma);
  CHECK(whatIf(all, Resource::Vector) > 0.9 * path.totalNs);
  CHECK(traces::reportText(model).find("verdict: bound by DMA") != std::string::npos);
  // the builder's notes name the phases: 16 loads, the reduces and the store
  CHECK(traces::phaseTimes(model, path).size() == 18);
}

TEST_CASE("trace analysis: a chain of dependent vector ops is VectorE-bound") {
  const auto model = simulated(vectorChain(64), sim::loadMachine("trn2"));
  const traces::DependencyGraph graph(model);
  const auto path = graph.criticalPath();
  CHECK(path.bound == Resource::Vector);
  CHECK(graph.whatIfs().front().resource == Resource::Vector);
}

TEST_CASE(
    "trace analysis: a Trn1 trace records its machine and never gets the Trn2 throttle warning") {
  // a matmul, a long vector chain, and another matmul: a PE gap of many microseconds
  KernelBuilder b("gap", neuronsim::isa::Geometry{});
  auto x = b.input("x", {128, 128}, Dtype::Bf16);
  auto out = b.output("out", {128, 128}, Dtype::Fp32);
  Tile a = b.sbuf({128, 128}, Dtype::Bf16, "a");
  Tile v = b.sbuf({128, 128}, Dtype::Bf16, "v");
  Tile p = b.psum({128, 128}, Dtype::Fp32, "p");
  Tile r = b.sbuf({128, 128}, Dtype::Fp32, "r");
  b.dmaCopy(a, x);
  b.matmul(p, a, a, false);
  b.tensorCopy(v, p);
  for (int i = 0; i < 40; ++i) b.tensorScalar(v, v, AluOp::Multiply, 1.0f);
  b.matmul(p, v, v, false);
  b.tensorCopy(r, p);
  b.dmaCopy(out, r);
  const auto program = b.finish();
  auto gapWarnings = [&](const char* machineName) {
    const auto model = simulated(program, sim::loadMachine(machineName));
    CHECK(model.machine.name == machineName);
    int n = 0;
    for (const auto& w : traces::traceWarnings(model))
      n += w.find("PE idle gaps") != std::string::npos;
    return n;
  };
  CHECK(gapWarnings("trn2") == 1);
  CHECK(gapWarnings("trn1") == 0);
}

TEST_CASE(
    "trace analysis: every library kernel's graph explains its engines' starts and its what-ifs "
    "are consistent") {
  const sim::MachineConfig machine = sim::loadMachine("trn2");
  for (const kernels::KernelSpec& spec : kernels::kernelRegistry()) {
    CAPTURE(spec.name);
    const kernels::ParamValues params = kernels::parseParams(spec, {});
    kernels::ShapeMap shapes;
    if (spec.deriveShapes) shapes = spec.deriveShapes({}, params);
    for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
    traces::EventLog log;
    kernels::RunOptions options;
    options.mode = kernels::RunMode::TimingOnly;
    options.sink = &log;
    const auto run = kernels::runKernel(spec, params, kernels::generateInputs(spec, shapes, 0),
                                        machine, options);
    const auto model = traces::traceModel(run.program, log, kernels::traceMachine(machine));
    const traces::DependencyGraph graph(model);
    REQUIRE(graph.acyclic());
    const double total = run.sim.totals.total.ns();
    CHECK(graph.endNs() == doctest::Approx(total));
    CHECK(graph.replayedEndNs() == doctest::Approx(total));
    // Vector, Scalar, GpSimd and the DMA triggers start exactly when an edge says (no unexplained
    // wait): the rebuilt waits and pipeline latencies match the simulator's.
    const auto unexplained = graph.residualNs();
    for (Resource r :
         {Resource::Vector, Resource::Scalar, Resource::GpSimd, Resource::DmaTrigger}) {
      CAPTURE(traces::resourceName(r));
      CHECK(unexplained[static_cast<size_t>(r)] == doctest::Approx(0).epsilon(1e-9).scale(total));
    }
    const auto path = graph.criticalPath();
    double sum = 0;
    for (double ns : path.resourceNs) sum += ns;
    CHECK(sum == doctest::Approx(total));
    const auto all = graph.whatIfs();
    REQUIRE(!all.empty());
    for (const auto& w : all) CHECK(w.endNs <= total + 1e-6);
    CHECK(whatIf(all, path.bound) < total);
    // library kernels name their phases
    CHECK(traces::phaseTimes(model, path).size() >= 2);
  }
}
