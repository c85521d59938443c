// The summary of one timed kernel run from its totals, the machine's peaks and the program.
#include "python/src/run_summary.h"

#include <string>

#include "kernels/harness/run_summary.h"
#include "traces/summary.h"

namespace neuronsim::python {

nlohmann::json runSummary(const kernels::KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const kernels::KernelRun& run,
                          const kernels::ParamValues& params) {
  traces::RunInfo info = kernels::kernelRunInfo(spec, run.shapes, dtype, machine, params);
  // A Python kernel declares its tensors per program: every input and output once.
  if (!spec.rooflineBytes)
    info.minHbmBytes = kernels::programRunInfo(run.program, machine, spec.name).minHbmBytes;
  nlohmann::json summary = kernels::runSummary(info, run.sim, run.runSeconds);
  summary["build_seconds"] = run.buildSeconds;
  return summary;
}

}  // namespace neuronsim::python
