#pragma once
// Emits the tiled matmul program into a builder.

#include "kernels/builder/kernel_builder.h"

namespace neuronsim::kernels {

/// out [M, N] fp32 = lhsT[K, M]^T @ rhs[K, N]; `dtype` is the inputs' dtype (fp32 or bf16).
/// Any sizes: K and M are tiled by 128, N by 512.
void buildMatmul(KernelBuilder& builder, const HbmView& lhsT, const HbmView& rhs,
                 const HbmView& out, isa::Dtype dtype);

}  // namespace neuronsim::kernels
