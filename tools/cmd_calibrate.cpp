// neuronsim calibrate: compares the timed model with published hardware measurements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/calibration/calibration.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace neuronsim::tools {

namespace {

constexpr const char* kUsage =
    "usage: neuronsim calibrate [--machine trn2|trn1] [--set KEY=VALUE]\n"
    "\n"
    "Runs microbenchmark programs that reproduce published measurements (reference\n"
    "sections 1.4, 2 and 5) and prints case | published | simulated | error %.\n"
    "Exit status 1 when a case is more than 15% off.\n"
    "\n"
    "options:\n"
    "  --machine M      only the cases published for preset M (default: all cases)\n"
    "  --set KEY=VALUE  override one machine parameter in every case (repeatable)\n"
    "  --help           this text\n";

constexpr double kTolerancePercent = 15.0;

}  // namespace

int calibrateCommand(int argc, char** argv) {
  const Args args(argc, argv, 2, {"help"});
  if (args.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  args.allowOnly("calibrate", {"machine", "set", "help"});
  const auto results = sim::runCalibration(args.get("machine").value_or(""), args.all("set"));
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
