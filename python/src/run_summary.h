#pragma once
// The summary of one timed kernel run, with the keys of `neuronsim run --summary-json`.

#include <cstdint>
#include <nlohmann/json.hpp>

#include "isa/program.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::python {

/// Bytes the program must move at minimum: every input and output tensor at its declared
/// dtype, each once (a registered kernel's spec.rooflineBytes, when set, counts fewer).
int64_t minimumHbmBytes(const isa::Program& program);

/// Summary JSON of a timed run (traces::summaryJson's keys) plus `build_seconds`.
nlohmann::json runSummary(const kernels::KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const kernels::KernelRun& run);

}  // namespace neuronsim::python
