#pragma once
// Emits the conv core program (shared by conv3d and conv3d_transpose) into a builder.

#include <optional>

#include "kernels/builder/kernel_builder.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// out [B, C_out, Do, Ho, Wo] = the ConvCore `core` of x [B, C_in, D, H, W] and `filters`
/// (layout per core.filtersCoCi), plus `bias` [C_out] when given, then core.act. One matmul per
/// tap and C_in tile accumulates in PSUM; the moving operand is a strided view of an input window.
void buildConv(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype, const HbmView& x,
               const HbmView& filters, const std::optional<HbmView>& bias, const HbmView& out);

}  // namespace neuronsim::kernels
