#pragma once
// Shared check of the conv tests: run a conv kernel on the interpreter and the timed model,
// compare with the plain C++ reference, the two runs bit for bit, and look for races.

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "kernel_check.h"
#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/harness/consistency.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::kernels::testing {

/// One test shape: input shapes, parameter flags (API names) and dtype.
struct ConvCase {
  Shape x;
  Shape filters;
  int64_t bias = 0;  ///< bias channels (0: no bias)
  std::vector<std::pair<std::string, std::string>> params;
  isa::Dtype dtype = isa::Dtype::Fp32;
};

inline const sim::MachineConfig& trn2() {
  static const sim::MachineConfig machine = sim::loadMachine("trn2");
  return machine;
}

/// The conv core plan of a conv3d or conv3d_transpose case on `machine` (what the kernel builds).
inline ConvPlan corePlanOf(const KernelSpec& spec, const ConvCase& c,
                           const sim::MachineConfig& machine = trn2()) {
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  if (c.bias > 0) shapes["bias"] = {c.bias};
  const ParamValues params = parseParams(spec, c.params);
  const ConvCore core = spec.name == "conv3d_transpose" ? conv3dTransposeCore(shapes, params)
                                                        : conv3dCore(shapes, params);
  return planConv(core, c.dtype, machine.geometry, convOptions(params));
}

/// conv3d_bwd's dw rows plan of `c` on `machine` (the case must plan dw by rows).
inline DwRowsPlan dwRowsPlanOf(const ConvCase& c, const sim::MachineConfig& machine = trn2()) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  const ConvCore core = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
  const ConvBwdPlan plan = planConvBwd(core, c.dtype, machine.geometry, bwdOptions(params));
  REQUIRE(plan.dwMethod == DwMethod::Rows);
  return plan.rows;
}

/// Trn2 with 64 partitions (`--set partitions=64`): kernels must take tile sizes from the machine.
inline const sim::MachineConfig& trn2Half() {
  static const sim::MachineConfig machine = sim::loadMachine("trn2", {"partitions=64"});
  return machine;
}

/// Runs `c` on `machine` and checks it against the reference (DESIGN.md tolerances),
/// interpreter == timed bit for bit, no race, no read of uninitialized memory. Returns the timed
/// run's total ns.
inline double checkConvCase(const KernelSpec& spec, const ConvCase& c,
                            const sim::MachineConfig& machine = trn2()) {
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  if (c.bias > 0) shapes["bias"] = {c.bias};
  const ParamValues params = parseParams(spec, c.params);
  if (spec.deriveShapes)
    for (const auto& [name, shape] : spec.deriveShapes(shapes, params)) shapes.emplace(name, shape);
  const HostTensors inputs = generateInputs(spec, shapes, 7);
  INFO("shape x_in " << shapeText(c.x) << " filters " << shapeText(c.filters) << " dtype "
                     << isa::dtypeName(c.dtype));
  const ConsistencyResult result = checkConsistent(spec, params, inputs, machine, c.dtype);
  return result.timed.sim.totals.total.ns();
}

}  // namespace neuronsim::kernels::testing
