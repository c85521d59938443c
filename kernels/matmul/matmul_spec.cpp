// Registry entry of matmul: tensors, shape rules, program, reference and flops.
#include <fmt/format.h>

#include "isa/error.h"
#include "kernels/matmul/matmul_build.h"
#include "kernels/matmul/matmul_kernel.h"
#include "kernels/reference/matmul_ref.h"

namespace neuronsim::kernels {

namespace {

ShapeMap inferMatmul(const ShapeMap& inputs, const ParamValues&) {
  const Shape& lhsT = inputs.at("lhsT");
  const Shape& rhs = inputs.at("rhs");
  if (lhsT.size() != 2)
    throw Error(fmt::format("matmul: lhsT has shape {} but must be [K, M]", shapeText(lhsT)));
  if (rhs.size() != 2)
    throw Error(fmt::format("matmul: rhs has shape {} but must be [K, N]", shapeText(rhs)));
  if (lhsT[0] != rhs[0])
    throw Error(
        fmt::format("matmul: lhsT has shape {} and rhs {} but their first axes (K) must be equal",
                    shapeText(lhsT), shapeText(rhs)));
  return {{"out", {lhsT[1], rhs[1]}}};
}

void buildMatmulSpec(KernelBuilder& builder, const KernelArgs& args) {
  const HbmView& lhsT = args.in("lhsT");
  const HbmView& rhs = args.in("rhs");
  const MatmulSchedule schedule = resolveMatmulSchedule(
      args.params, lhsT.size(0), lhsT.size(1), rhs.size(1), args.dtype, builder.geometry());
  buildMatmul(builder, lhsT, rhs, args.out("out"), args.dtype, schedule);
}

HostTensors referenceMatmul(const HostTensors& inputs, const ParamValues&) {
  const HostTensor& lhsT = inputs.at("lhsT");
  const HostTensor& rhs = inputs.at("rhs");
  const int64_t k = lhsT.shape[0], m = lhsT.shape[1], n = rhs.shape[1];
  return {{"out", HostTensor{{m, n}, matmulReference(lhsT.values, rhs.values, k, m, n)}}};
}

double matmulFlops(const ShapeMap& inputs, const ParamValues&) {
  const Shape& lhsT = inputs.at("lhsT");
  const Shape& rhs = inputs.at("rhs");
  return 2.0 * static_cast<double>(lhsT[0]) * static_cast<double>(lhsT[1]) *
         static_cast<double>(rhs[1]);
}

}  // namespace

KernelSpec matmulSpec() {
  KernelSpec spec;
  spec.name = "matmul";
  spec.description =
      "out [M, N] = lhsT[K, M]^T @ rhs[K, N], fp32 output (K, M tiled by 128, N by 512)";
  spec.inputs = {{"lhsT", "left operand, transposed: [K, M]", false},
                 {"rhs", "right operand: [K, N]", false}};
  spec.outputs = {{"out", "product [M, N], fp32", false}};
  spec.params = matmulScheduleParams();
  spec.defaultShapes = {{"lhsT", {512, 256}}, {"rhs", {512, 1024}}};
  spec.inferShapes = inferMatmul;
  spec.build = buildMatmulSpec;
  spec.reference = referenceMatmul;
  spec.flops = matmulFlops;
  spec.fp32Outputs = true;
  return spec;
}

}  // namespace neuronsim::kernels
