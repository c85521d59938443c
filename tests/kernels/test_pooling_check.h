#pragma once
// Pooling test helper: one problem run on every pooling kernel, checked against the references.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernel_check.h"
#include "kernels/harness/consistency.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/pooling/pooling_params.h"
#include "kernels/reference/pooling_ref.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

namespace neuronsim::kernels::pooling_testing {

/// One pooling problem: the forward input's shape (data_format layout) and the parameters.
struct PoolCase {
  std::string label;
  Shape input;
  std::vector<std::pair<std::string, std::string>> params;
};

/// Whether the kernel reads output_tensor / grad_output.
inline bool isBackward(const std::string& kernel) {
  return kernel.find("backward") != std::string::npos;
}

/// Inputs for `kernel`: seeded normals; max kernels get values rounded to halves so windows
/// hold ties (the first-match rule matters), and max backward's output_tensor is the true
/// forward output of its input.
inline HostTensors poolInputs(const KernelSpec& spec, const PoolingConfig& config, isa::Dtype dtype,
                              uint64_t seed) {
  ShapeMap shapes{{"input_tensor", config.inputShape()}};
  if (isBackward(spec.name)) shapes["grad_output"] = config.outputShape();
  if (spec.name == "max_pooling_3d_backward") shapes["output_tensor"] = config.outputShape();
  HostTensors inputs = generateInputs(spec, shapes, seed);
  if (spec.name.rfind("max_", 0) == 0) {
    for (float& v : inputs["input_tensor"].values) v = std::round(v * 2.0f) / 2.0f;
  }
  inputs = roundedTo(inputs, dtype);
  if (spec.name == "max_pooling_3d_backward") {
    inputs["output_tensor"].values = maxPool3dRef(config, inputs["input_tensor"].values);
  }
  return inputs;
}

/// Runs `kernel` on `c` (interpreter and timed model) and checks the reference error, reads
/// of unwritten memory, bit equality of the two runs and the race detector.
inline void checkPoolCase(const std::string& kernel, const PoolCase& c, isa::Dtype dtype,
                          const sim::MachineConfig& machine, uint64_t seed = 1) {
  const KernelSpec& spec = findKernel(kernel);
  const ParamValues params = parseParams(spec, c.params);
  const PoolingConfig config = poolingConfig(kernel, c.input, params);
  const HostTensors inputs = poolInputs(spec, config, dtype, seed);
  INFO(kernel << " " << isa::dtypeName(dtype) << " " << c.label << " input " << shapeText(c.input));
  testing::checkConsistent(spec, params, inputs, machine, dtype);
}

}  // namespace neuronsim::kernels::pooling_testing
