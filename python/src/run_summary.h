#pragma once
// The summary of one timed kernel run, with the keys of `neuronsim run --summary-json`.

#include <cstdint>
#include <nlohmann/json.hpp>

#include "isa/program.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::python {

/// Summary JSON of a timed run (traces::summaryJson's keys) plus `build_seconds`; `params` as in
/// kernels::kernelRunInfo (the must-compute flops of a kernel that declares them).
nlohmann::json runSummary(const kernels::KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const kernels::KernelRun& run,
                          const kernels::ParamValues& params);

}  // namespace neuronsim::python
