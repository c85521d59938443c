#pragma once
// Microbenchmark programs that reproduce published NeuronCore measurements (reference 1.4,
// 2.2-2.4 and 5), run on the timed model and compared with the published figure.

#include <string>
#include <vector>

#include "sim/machine_config.h"

namespace neuronsim::sim {

struct CalibrationResult {
  std::string name;     ///< what is measured, with its source key and unit
  std::string machine;  ///< preset it was published for and run on
  double published = 0;
  double simulated = 0;
  double errorPercent() const {
    return published != 0 ? 100.0 * (simulated - published) / published : 0;
  }
};

/// Runs every case. `machineFilter` empty: each case on its own preset; otherwise only the
/// cases published for that preset. `overrides` (KEY=VALUE) apply to every machine.
std::vector<CalibrationResult> runCalibration(const std::string& machineFilter,
                                              const std::vector<std::string>& overrides);

}  // namespace neuronsim::sim
