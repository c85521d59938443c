#pragma once
// Published NeuronCore measurements reproduced on the timed model (reference 1.4, 2.4, 5).
// A fit case is a measurement a machine constant was chosen from; a check case is an
// independent measurement no constant was set from. Formulas the model merely reads back
// (a latency, a cycle count) are unit tests, not calibration.

#include <string>
#include <vector>

#include "sim/machine_config.h"

namespace neuronsim::sim {

enum class CalibrationRole : uint8_t {
  Fit,    ///< a constant was chosen from this measurement
  Check,  ///< independent: never used to set a constant
};

/// "fit" or "check".
const char* roleName(CalibrationRole role);

struct CalibrationResult {
  std::string name;     ///< what is measured, with its source key and unit
  std::string machine;  ///< preset it was published for and run on
  CalibrationRole role = CalibrationRole::Check;
  double low = 0;   ///< published value, or the low end of a published range
  double high = 0;  ///< equal to low for a single value
  double simulated = 0;
  /// 0 inside [low, high]; otherwise the distance to the nearer end, in percent of that end.
  double errorPercent() const;
  /// The published value as printed: "1416" or "75-100".
  std::string publishedText() const;
};

/// Runs the microbenchmark cases. `machineFilter` empty: each case on its own preset;
/// otherwise only the cases published for that preset (which must be trn2 or trn1).
/// `overrides` (KEY=VALUE) apply to every machine.
std::vector<CalibrationResult> runCalibration(const std::string& machineFilter,
                                              const std::vector<std::string>& overrides);

/// Largest |errorPercent| among the cases of `role` (0 when there are none); with `machine`,
/// only among that preset's cases.
double maxErrorPercent(const std::vector<CalibrationResult>& results, CalibrationRole role,
                       const std::string& machine = "");

}  // namespace neuronsim::sim
