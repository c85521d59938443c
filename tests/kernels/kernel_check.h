#pragma once
// Shared test helper: run a registered kernel on seeded inputs, compare with its reference,
// and the timed model with the interpreter bit for bit.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/harness/consistency.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"

namespace neuronsim::kernels::testing {

/// One kernel test case: kernel, input shapes, parameter texts (API names), dtype, seed.
struct KernelCase {
  std::string kernel;
  ShapeMap shapes;
  std::vector<std::pair<std::string, std::string>> params;
  isa::Dtype dtype = isa::Dtype::Fp32;
  uint64_t seed = 0;
};

/// The timed run's share of its roofline, in percent (the summary's roofline_percent).
inline double rooflinePercent(const KernelSpec& spec, const ParamValues& params,
                              const KernelRun& timed, const sim::MachineConfig& machine,
                              isa::Dtype dtype) {
  const traces::RunInfo info = kernelRunInfo(spec, timed.shapes, dtype, machine, params);
  return runSummary(info, timed.sim, 0)["roofline_percent"].get<double>();
}

/// True when two runs measured the same times and counts (host time aside).
inline bool sameTotals(const traces::RunTotals& a, const traces::RunTotals& b) {
  for (size_t e = 0; e < a.engines.size(); ++e)
    if (a.engines[e].busy != b.engines[e].busy || a.engines[e].active != b.engines[e].active ||
        a.engines[e].instructions != b.engines[e].instructions)
      return false;
  return a.total == b.total && a.instructions == b.instructions && a.dmaBytes == b.dmaBytes &&
         a.dmaTransfers == b.dmaTransfers && a.dmaActive == b.dmaActive &&
         a.hbmBytes == b.hbmBytes && a.flops == b.flops && a.transposeFlops == b.transposeFlops &&
         a.sbufReadBytes == b.sbufReadBytes && a.sbufWriteBytes == b.sbufWriteBytes;
}

/// The checks every kernel test makes on one run of `spec` on `inputs`: reference error within
/// the DESIGN.md tolerance, no never-written reads, timed outputs bit-identical to the
/// interpreter's, no races, queues completing in order, roofline_percent at most 100, the
/// same totals when one thread drives every engine (untraced timing-only runs without race
/// detection, sim::engineThreads). Returns both runs.
inline ConsistencyResult checkConsistent(const KernelSpec& spec, const ParamValues& params,
                                         const HostTensors& inputs,
                                         const sim::MachineConfig& machine, isa::Dtype dtype) {
  const HostTensors rounded = roundedTo(inputs, dtype);
  ConsistencyResult both = runBoth(spec, params, rounded, machine, dtype);
  const double error =
      maxNormalizedError(both.interpreted.outputs, spec.reference(rounded, params));
  INFO("error " << error << " tolerance " << tolerance(dtype));
  CHECK(error <= tolerance(dtype));
  CHECK(both.interpreted.uninitializedReads.empty());
  INFO("timed vs interpreter: " << both.difference);
  CHECK(both.identical);
  CHECK(both.races.empty());
  INFO("first queue order violation: "
       << (both.queueOrderViolations.empty() ? "" : both.queueOrderViolations[0]));
  CHECK(both.queueOrderViolations.empty());
  sim::SimOptions together;
  together.timingOnly = true;
  together.detectRaces = false;
  CHECK(sameTotals(sim::simulate(both.timed.program, machine, nullptr, together).totals,
                   both.timed.sim.totals));
  // The roofline counts only what the kernel must move and compute: no run may beat it.
  CHECK(rooflinePercent(spec, params, both.timed, machine, dtype) <= 100.0);
  return both;
}

inline std::string describe(const KernelCase& c) {
  std::string s = c.kernel + " " + std::string(isa::dtypeName(c.dtype));
  for (const auto& [name, shape] : c.shapes) s += " " + name + "=" + shapeText(shape);
  for (const auto& [name, value] : c.params) s += " " + name + "=" + value;
  return s;
}

/// checkConsistent on the case's seeded inputs.
inline void checkKernelCase(const KernelCase& c, const sim::MachineConfig& machine) {
  INFO(describe(c));
  const KernelSpec& spec = findKernel(c.kernel);
  checkConsistent(spec, parseParams(spec, c.params), generateInputs(spec, c.shapes, c.seed),
                  machine, c.dtype);
}

inline void checkKernelCase(const KernelCase& c) {
  checkKernelCase(c, sim::loadMachine("trn2"));
}

}  // namespace neuronsim::kernels::testing
