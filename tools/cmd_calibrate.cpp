// neuronsim calibrate: compares the timed model with published hardware measurements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "isa/error.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/calibration/calibration.h"
#include "sim/simulator.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace neuronsim::tools {

namespace {

constexpr const char* kUsage =
    "usage: neuronsim calibrate [--machine trn2|trn1] [--set KEY=VALUE]\n"
    "\n"
    "Runs microbenchmark programs and one library kernel that reproduce published\n"
    "measurements (reference sections 1.4, 2 and 5) and prints\n"
    "case | published | simulated | error %. Exit status 1 when a case is more than 15% off.\n"
    "\n"
    "options:\n"
    "  --machine M      only the cases published for preset M (default: all cases)\n"
    "  --set KEY=VALUE  override one machine parameter in every case (repeatable)\n"
    "  --help           this text\n";

constexpr double kTolerancePercent = 15.0;

/// L1: the NKI-library conv3d reaches 93-96% MFU on large compute-bound shapes such as
/// C_in = C_out = 1024, 1x60x104 (trn2, bf16). The filter size is not stated; 1x3x3 with
/// "same" padding is assumed. Published value: the middle of the range.
sim::CalibrationResult conv3dMfu(const std::vector<std::string>& overrides) {
  const sim::MachineConfig machine = sim::loadMachine("trn2", overrides);
  const kernels::KernelSpec& spec = kernels::findKernel("conv3d");
  const kernels::ParamValues params = kernels::parseParams(spec, {{"padding", "0,0,1,1,1,1"}});
  const kernels::ShapeMap inputs = {{"x_in", {1, 1024, 1, 60, 104}},
                                    {"filters", {1, 3, 3, 1024, 1024}}};
  const kernels::KernelShapes shapes = kernels::checkShapes(spec, inputs, params);
  const isa::Program program =
      kernels::buildKernel(spec, params, shapes, isa::Dtype::Bf16, machine.geometry);
  sim::SimOptions options;
  options.timingOnly = true;
  options.detectRaces = false;
  const sim::SimResult r = sim::simulate(program, machine, nullptr, options);
  const double flops = spec.flops ? spec.flops(shapes.inputs, params) : 0;
  const double mfu = 100.0 * flops / (machine.peakBf16Flops() * 1e-9 * r.totals.totalNs);
  return {"L1: NKI-library conv3d bf16, C=1024, 1x60x104, 1x3x3 taps (MFU %)", "trn2", 94.5, mfu};
}

}  // namespace

int calibrateCommand(int argc, char** argv) {
  const Args args(argc, argv, 2, {"help"});
  if (args.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  args.allowOnly("calibrate", {"machine", "set", "help"});
  if (!args.positional().empty())
    throw Error("calibrate: unexpected argument '" + args.positional()[0] + "'");
  const std::string machine = args.get("machine").value_or("");
  std::vector<sim::CalibrationResult> results = sim::runCalibration(machine, args.all("set"));
  if (machine.empty() || machine == "trn2") results.push_back(conv3dMfu(args.all("set")));
  std::printf("case | published | simulated | error %%\n");
  double maxError = 0;
  for (const auto& r : results) {
    std::printf("%s [%s] | %.4g | %.4g | %+.1f\n", r.name.c_str(), r.machine.c_str(), r.published,
                r.simulated, r.errorPercent());
    maxError = std::max(maxError, std::fabs(r.errorPercent()));
  }
  std::printf("calibration: %zu cases, max error %.1f%%\n", results.size(), maxError);
  return maxError <= kTolerancePercent ? 0 : 1;
}

}  // namespace neuronsim::tools
