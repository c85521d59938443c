// The roofline counts only the bytes and flops a kernel must move and compute, so no run of any
// registered kernel may exceed 100% of it. Every kernel test checks its own shapes
// (kernel_check.h); this suite adds each kernel's default shapes and the large shapes of issue 10.
#include <doctest/doctest.h>

#include "kernel_check.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

using neuronsim::isa::Dtype;
using namespace neuronsim::kernels;

namespace {

/// roofline_percent of a timing-only run of `kernel` on `shapes` (defaults fill the rest).
double timingOnlyRoofline(const std::string& kernel, const ShapeMap& given, Dtype dtype,
                          const std::vector<std::pair<std::string, std::string>>& texts = {}) {
  const KernelSpec& spec = findKernel(kernel);
  const ParamValues params = parseParams(spec, texts);
  ShapeMap shapes = spec.deriveShapes ? spec.deriveShapes(given, params) : given;
  for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
  HostTensors inputs;
  for (const auto& [name, shape] : checkShapes(spec, shapes, params).inputs)
    inputs[name].shape = shape;
  RunOptions options;
  options.dtype = dtype;
  options.mode = RunMode::TimingOnly;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  const KernelRun run = runKernel(spec, params, inputs, machine, options);
  return testing::rooflinePercent(spec, params, run, machine, dtype);
}

}  // namespace

TEST_CASE("roofline: every registered kernel on its default shapes stays within 100%") {
  for (const KernelSpec& spec : kernelRegistry())
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(spec.name);
      CAPTURE(neuronsim::isa::dtypeName(dtype));
      const double percent = timingOnlyRoofline(spec.name, {}, dtype);
      CHECK(percent > 0.0);
      CHECK(percent <= 100.0);
    }
}

TEST_CASE("roofline: issue 10's shapes stay within 100%") {
  CHECK(timingOnlyRoofline("avg_pooling_3d_backward", {{"input_tensor", {2, 64, 16, 64, 64}}},
                           Dtype::Fp32, {{"kernel_size", "2"}}) <= 100.0);
  CHECK(timingOnlyRoofline("matmul", {{"lhsT", {16384, 512}}, {"rhs", {16384, 1024}}},
                           Dtype::Bf16) <= 100.0);
}
