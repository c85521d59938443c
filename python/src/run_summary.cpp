// The summary of one timed kernel run from its totals, the machine's peaks and the program.
#include "python/src/run_summary.h"

#include <string>

#include "isa/dtype.h"
#include "traces/summary.h"

namespace neuronsim::python {

int64_t minimumHbmBytes(const isa::Program& program) {
  int64_t bytes = 0;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind != isa::TensorKind::Internal) bytes += t.numElements() * isa::dtypeBytes(t.dtype);
  return bytes;
}

nlohmann::json runSummary(const kernels::KernelSpec& spec, const sim::MachineConfig& machine,
                          isa::Dtype dtype, const kernels::KernelRun& run) {
  traces::RunInfo info;
  info.kernel = spec.name;
  info.machine = machine.name;
  info.dtype = std::string(isa::dtypeName(dtype));
  info.peakFlopsPerNs =
      machine.peakBf16Flops() / 1e9 / (dtype == isa::Dtype::Fp32 ? machine.fp32MatmulFactor : 1.0);
  info.hbmBytesPerNs = machine.hbmGBps;
  info.minHbmBytes = minimumHbmBytes(run.program);
  traces::RunTotals totals = run.sim.totals;
  if (totals.hostSeconds <= 0) totals.hostSeconds = run.runSeconds;
  nlohmann::json summary = traces::summaryJson(info, totals);
  summary["build_seconds"] = run.buildSeconds;
  return summary;
}

}  // namespace neuronsim::python
