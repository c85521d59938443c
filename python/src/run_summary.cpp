// The summary of one timed kernel run from its totals, the machine's peaks and the program.
#include "python/src/run_summary.h"

#include <string>

#include "isa/dtype.h"
#include "kernels/harness/run_summary.h"
#include "traces/summary.h"

namespace neuronsim::python {

int64_t minimumHbmBytes(const isa::Program& program) {
  int64_t bytes = 0;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind != isa::TensorKind::Internal) bytes += t.numElements() * isa::dtypeBytes(t.dtype);
  return bytes;
}

nlohmann::json runSummary(const kernels::KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const kernels::KernelRun& run,
                          const kernels::ParamValues& params) {
  traces::RunInfo info = kernels::kernelRunInfo(spec, run.shapes, dtype, machine, params);
  if (!spec.rooflineBytes) info.minHbmBytes = minimumHbmBytes(run.program);
  nlohmann::json summary = kernels::runSummary(info, run.sim, run.runSeconds);
  summary["build_seconds"] = run.buildSeconds;
  return summary;
}

}  // namespace neuronsim::python
