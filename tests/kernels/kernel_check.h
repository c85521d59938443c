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
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::kernels::testing {

/// One kernel test case: kernel, input shapes, parameter texts (API names), dtype, seed.
struct KernelCase {
  std::string kernel;
  ShapeMap shapes;
  std::vector<std::pair<std::string, std::string>> params;
  isa::Dtype dtype = isa::Dtype::Fp32;
  uint64_t seed = 0;
};

struct KernelCheck {
  double error = 0;      ///< normalized error of the interpreter's outputs vs the reference
  double tolerance = 0;  ///< DESIGN.md section 5
  ConsistencyResult both;
};

/// Runs `c` on `machine` (interpreter, timed model, reference).
inline KernelCheck runKernelCase(const KernelCase& c, const sim::MachineConfig& machine) {
  const KernelSpec& spec = findKernel(c.kernel);
  const ParamValues params = parseParams(spec, c.params);
  const HostTensors inputs = roundedTo(generateInputs(spec, c.shapes, c.seed), c.dtype);
  KernelCheck check;
  check.both = runBoth(spec, params, inputs, machine, c.dtype);
  check.error = maxNormalizedError(check.both.interpreted.outputs, spec.reference(inputs, params));
  check.tolerance = tolerance(c.dtype);
  return check;
}

inline std::string describe(const KernelCase& c) {
  std::string s = c.kernel + " " + std::string(isa::dtypeName(c.dtype));
  for (const auto& [name, shape] : c.shapes) s += " " + name + "=" + shapeText(shape);
  for (const auto& [name, value] : c.params) s += " " + name + "=" + value;
  return s;
}

/// The checks every kernel test makes: error within tolerance, no never-written reads,
/// timed outputs bit-identical to the interpreter's, no races.
inline void checkKernelCase(const KernelCase& c, const sim::MachineConfig& machine) {
  INFO(describe(c));
  const KernelCheck r = runKernelCase(c, machine);
  INFO("error " << r.error << " tolerance " << r.tolerance);
  CHECK(r.error <= r.tolerance);
  CHECK(r.both.interpreted.uninitializedReads.empty());
  INFO("timed vs interpreter: " << r.both.difference);
  CHECK(r.both.identical);
  CHECK(r.both.races.empty());
  INFO("first queue order violation: " << (r.both.queueOrderViolations.empty() ? "" : r.both.queueOrderViolations[0]));
  CHECK(r.both.queueOrderViolations.empty());
}

inline void checkKernelCase(const KernelCase& c) { checkKernelCase(c, sim::loadMachine("trn2")); }

}  // namespace neuronsim::kernels::testing
