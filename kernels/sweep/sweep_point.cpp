// A sweep configuration: parameters parsed, shapes resolved, a timing-only run, its summary.
#include "kernels/sweep/sweep_point.h"

#include <fmt/format.h>

#include "isa/error.h"
#include "kernels/harness/program_identity.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "sim/machine_config.h"

namespace neuronsim::kernels {

std::string boundingEngine(const nlohmann::json& summary) {
  std::string busiest = "dma";
  double most = summary.at("dma").at("active_ns").get<double>();
  for (const auto& [name, engine] : summary.at("engines").items()) {
    const double busy = engine.at("busy_ns").get<double>();
    if (busy > most) {
      most = busy;
      busiest = name;
    }
  }
  return busiest;
}

nlohmann::json runSweepPoint(const SweepSetup& setup, const SweepPoint& point) {
  const KernelSpec& spec = *setup.spec;
  const ParamValues params = parseParams(spec, point.params);
  const sim::MachineConfig machine = sim::loadMachine(setup.machine, setup.sets);
  InputRequest request;
  request.shapes = setup.shapes;
  const ShapeMap inputShapes = resolveInputShapes(spec, request, params);
  RunOptions options;
  options.dtype = setup.dtype;
  options.mode = RunMode::TimingOnly;
  options.detectRaces = setup.raceCheck;
  const KernelRun run = runKernel(spec, params, shapesOnly(inputShapes), machine, options);
  if (!run.sim.races.empty())
    throw Error(run.sim.races.size() == 1
                    ? run.sim.races[0]
                    : fmt::format("{} (and {} more)", run.sim.races[0], run.sim.races.size() - 1));
  const nlohmann::json summary =
      runSummary(kernelRunInfo(spec, run.shapes, setup.dtype, machine, params), run.sim, 0);
  return {{"total_ns", summary.at("total_ns")},
          {"roofline_percent", summary.at("roofline_percent")},
          {"roofline_bound", summary.at("roofline_bound")},
          {"bound_engine", boundingEngine(summary)},
          {"mfu_percent", summary.at("mfu_percent")},
          {"mbu_percent", summary.at("mbu_percent")},
          {"instructions", summary.at("instructions")},
          {"program", programFingerprint(run.program)}};
}

}  // namespace neuronsim::kernels
