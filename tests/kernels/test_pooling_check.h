#pragma once
// Pooling test helper: one problem run on every pooling kernel, checked against the references.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

/// Puts NaN, +Inf and -Inf into input_tensor at seeded positions (about one element in
/// `every`, NaNs often in runs so that windows hold several) and recomputes max backward's
/// output_tensor.
inline void addNonFinite(const KernelSpec& spec, const PoolingConfig& config, HostTensors& inputs,
                         uint64_t every, uint64_t seed) {
  std::vector<float>& x = inputs["input_tensor"].values;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < x.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t pick = (state >> 33) % (every * 4);
    if (pick < 2) x[i] = std::nanf("");
    if (pick == 2) x[i] = std::numeric_limits<float>::infinity();
    if (pick == 3) x[i] = -std::numeric_limits<float>::infinity();
    if (pick == 4 && i + 1 < x.size()) x[i] = x[i + 1] = std::nanf("");
  }
  if (spec.name == "max_pooling_3d_backward")
    inputs["output_tensor"].values = maxPool3dRef(config, x);
}

/// Puts NaN, +Inf and -Inf into grad_output at seeded positions (about one element in
/// `every`): a window's gradient, whatever it is, reaches only its chosen input(s).
inline void addNonFiniteGrad(HostTensors& inputs, uint64_t every, uint64_t seed) {
  std::vector<float>& g = inputs["grad_output"].values;
  uint64_t state = seed * 0xC2B2AE3D27D4EB4Full + 3;
  for (float& v : g) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t pick = (state >> 33) % (every * 3);
    if (pick == 0) v = std::nanf("");
    if (pick == 1) v = std::numeric_limits<float>::infinity();
    if (pick == 2) v = -std::numeric_limits<float>::infinity();
  }
}

/// Makes max backward's output_tensor not the forward result at seeded windows (about one in
/// `every`): a value no input holds (the gradient is dropped), NaN where the window may hold
/// none (dropped unless it does), or -inf (the first -inf input, if any, gets it).
inline void perturbOutputTensor(HostTensors& inputs, isa::Dtype dtype, uint64_t every,
                                uint64_t seed) {
  std::vector<float>& ot = inputs["output_tensor"].values;
  uint64_t state = seed * 0xD6E8FEB86659FD93ull + 5;
  for (float& v : ot) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t pick = (state >> 33) % (every * 3);
    if (pick == 0) v += 0.25f;  // inputs are halves: no input equals it
    if (pick == 1) v = std::nanf("");
    if (pick == 2) v = -std::numeric_limits<float>::infinity();
  }
  inputs = roundedTo(inputs, dtype);
}

/// `kernel`'s program for `c` on `machine`; its SBUF/PSUM allocations go to `records` if given.
inline isa::Program poolProgram(const std::string& kernel, const PoolCase& c, isa::Dtype dtype,
                                const sim::MachineConfig& machine,
                                std::vector<AllocationRecord>* records = nullptr) {
  const KernelSpec& spec = findKernel(kernel);
  const ParamValues params = parseParams(spec, c.params);
  const PoolingConfig config = poolingConfig(kernel, c.input, params);
  ShapeMap inputs{{"input_tensor", config.inputShape()}};
  if (isBackward(kernel)) inputs["grad_output"] = config.outputShape();
  if (kernel == "max_pooling_3d_backward") inputs["output_tensor"] = config.outputShape();
  return buildKernel(spec, params, checkShapes(spec, inputs, params), dtype, machine.geometry,
                     records);
}

/// The SBUF/PSUM allocations `kernel` makes for `c` (which buffers the planner chose).
inline std::vector<AllocationRecord> poolAllocations(const std::string& kernel, const PoolCase& c,
                                                     isa::Dtype dtype,
                                                     const sim::MachineConfig& machine) {
  std::vector<AllocationRecord> records;
  poolProgram(kernel, c, dtype, machine, &records);
  return records;
}

/// DMA instructions in `kernel`'s program for `c` (how finely the planner cut the planes).
inline int64_t poolDmaCount(const std::string& kernel, const PoolCase& c, isa::Dtype dtype,
                            const sim::MachineConfig& machine) {
  int64_t dmas = 0;
  for (const isa::Instruction& inst : poolProgram(kernel, c, dtype, machine).instructions)
    dmas += isa::isDma(inst.opcode) ? 1 : 0;
  return dmas;
}

/// Partitions the allocation named `name` spans (0 when there is none).
inline int32_t allocationPartitions(const std::vector<AllocationRecord>& records,
                                    const std::string& name) {
  for (const AllocationRecord& r : records)
    if (r.name == name) return r.partitions;
  return 0;
}

/// True when an allocation named `name` lives in `space`.
inline bool hasAllocation(const std::vector<AllocationRecord>& records, const std::string& name,
                          isa::Space space) {
  for (const AllocationRecord& r : records)
    if (r.name == name && r.space == space) return true;
  return false;
}

/// Runs `kernel` on `c` (interpreter and timed model) and checks the reference error, reads
/// of unwritten memory, bit equality of the two runs and the race detector. `nonFiniteEvery`
/// > 0 puts NaN and Inf into the input (addNonFinite), `nonFiniteGradEvery` > 0 into
/// grad_output (addNonFiniteGrad), `wrongOutputEvery` > 0 into max backward's output_tensor
/// (perturbOutputTensor).
inline void checkPoolCase(const std::string& kernel, const PoolCase& c, isa::Dtype dtype,
                          const sim::MachineConfig& machine, uint64_t seed = 1,
                          uint64_t nonFiniteEvery = 0, uint64_t nonFiniteGradEvery = 0,
                          uint64_t wrongOutputEvery = 0) {
  const KernelSpec& spec = findKernel(kernel);
  const ParamValues params = parseParams(spec, c.params);
  const PoolingConfig config = poolingConfig(kernel, c.input, params);
  HostTensors inputs = poolInputs(spec, config, dtype, seed);
  if (nonFiniteEvery > 0) addNonFinite(spec, config, inputs, nonFiniteEvery, seed);
  if (nonFiniteGradEvery > 0) addNonFiniteGrad(inputs, nonFiniteGradEvery, seed);
  if (wrongOutputEvery > 0) perturbOutputTensor(inputs, dtype, wrongOutputEvery, seed);
  INFO(kernel << " " << isa::dtypeName(dtype) << " " << c.label << " input " << shapeText(c.input));
  const ConsistencyResult both = testing::checkConsistent(spec, params, inputs, machine, dtype);
  // The roofline counts only bytes the kernel must move, so no run may beat it.
  const double rooflineNs =
      static_cast<double>(minimumHbmBytes(spec, both.timed.shapes, dtype, params)) /
      machine.hbmGBps;
  CHECK(both.timed.sim.totals.total.ns() >= rooflineNs);
}

}  // namespace neuronsim::kernels::pooling_testing
