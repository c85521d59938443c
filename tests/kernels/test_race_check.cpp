// Race detection off (run --no-race-check, sweep --no-race-check, races="off"): which runs take
// the one-thread path, and a sweep configuration that races fails only while detection is on.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "kernels/builder/kernel_builder.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "kernels/sweep/sweep_point.h"
#include "sim/machine_config.h"

using neuronsim::Error;
using namespace neuronsim;
using namespace neuronsim::kernels;

namespace {

/// y = exp(x) on ScalarE; with `racy` the activation does not wait for x's load.
KernelSpec exponentSpec() {
  KernelSpec spec;
  spec.name = "exponent";
  spec.inputs = {{"x", "input"}};
  spec.outputs = {{"y", "output"}};
  spec.params = {{"racy", ParamType::Bool, "false", "drop the wait for the load", {}}};
  spec.defaultShapes = {{"x", {64, 32}}};
  spec.inferShapes = [](const ShapeMap& inputs, const ParamValues&) {
    return ShapeMap{{"y", inputs.at("x")}};
  };
  spec.build = [](KernelBuilder& b, const KernelArgs& args) {
    Tile t = b.sbuf({64, 32}, args.dtype, "t");
    b.dmaCopy(t, args.in("x"));
    b.setAutoSync(!args.params.getBool("racy"));
    b.activation(t, t, isa::ActFn::Exp);
    b.setAutoSync(true);
    b.dmaCopy(args.out("y"), t);
  };
  return spec;
}

}  // namespace

TEST_CASE("race check: only an untraced timing-only run without race detection is one thread") {
  const KernelSpec& spec = findKernel("matmul");
  const sim::MachineConfig machine = sim::loadMachine("trn1");  // ports: a thread of their own
  const HostTensors inputs = generateInputs(spec, {{"lhsT", {130, 70}}, {"rhs", {130, 200}}}, 1);
  traces::EventLog log;
  struct Case {
    RunMode mode;
    bool detectRaces;
    traces::EventSink* sink;
    bool oneThread;
  };
  for (const Case& c :
       {Case{RunMode::TimingOnly, false, nullptr, true},
        Case{RunMode::TimingOnly, true, nullptr, false},
        Case{RunMode::TimingOnly, false, &log, false}, Case{RunMode::Timed, false, nullptr, false},
        Case{RunMode::Timed, true, nullptr, false}}) {
    CAPTURE(static_cast<int>(c.mode));
    CAPTURE(c.detectRaces);
    CAPTURE(c.sink != nullptr);
    RunOptions options;
    options.mode = c.mode;
    options.detectRaces = c.detectRaces;
    options.sink = c.sink;
    const KernelRun run = runKernel(spec, parseParams(spec, {}), inputs, machine, options);
    CHECK(run.sim.oneThread == c.oneThread);
    CHECK(run.sim.races.empty());
  }
}

TEST_CASE(
    "race check: a racy sweep configuration fails with its first race, unless detection is off") {
  const KernelSpec spec = exponentSpec();
  SweepSetup setup;
  setup.spec = &spec;
  const SweepPoint racy{0, {{"racy", "true"}}};
  const SweepPoint synced{1, {{"racy", "false"}}};
  CHECK_THROWS_WITH_AS(runSweepPoint(setup, racy),
                       doctest::Contains("race: instruction 1 (activation on scalar)"), Error);
  CHECK(runSweepPoint(setup, synced).at("total_ns").get<double>() > 0);
  setup.raceCheck = false;
  const nlohmann::json unchecked = runSweepPoint(setup, racy);
  CHECK(unchecked.at("total_ns").get<double>() > 0);
  // The same time as the racy program's run with detection on.
  RunOptions options;
  options.mode = RunMode::TimingOnly;
  const KernelRun timed =
      runKernel(spec, parseParams(spec, {{"racy", "true"}}), shapesOnly({{"x", {64, 32}}}),
                sim::loadMachine("trn2"), options);
  CHECK(timed.sim.races.size() >= 1);
  CHECK(unchecked.at("total_ns").get<double>() == timed.sim.totals.total.ns());
}
