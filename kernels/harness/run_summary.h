#pragma once
// The summary of one timed kernel run, shared by `neuronsim run` and the Python module.

#include <cstdint>
#include <nlohmann/json.hpp>

#include "isa/program.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::kernels {

/// Bytes the program must move at minimum: every input and output tensor at its declared
/// dtype, each once (equals minimumHbmBytes for a registered kernel).
int64_t minimumHbmBytes(const isa::Program& program);

/// Summary JSON of a timed run (traces::summaryJson's keys) plus `build_seconds`.
nlohmann::json runSummary(const KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const KernelRun& run);

}  // namespace neuronsim::kernels
