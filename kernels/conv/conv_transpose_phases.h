#pragma once
// conv3d_transpose whose kernel equals its stride, without padding: every output takes exactly
// one tap per axis, so the kernel is one matmul per output phase over the same input.

#include <optional>

#include "kernels/builder/kernel_builder.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_plan.h"

namespace neuronsim::kernels {

/// True when `core` is a transposed conv with kernel = stride on every axis, dilation 1, no
/// padding and no output padding, C_in-major filters and W within one matmul block.
bool transposePhasesApply(const ConvCore& core, const isa::Geometry& geometry);

/// Emits `core` (transposePhasesApply holds) as phase matmuls: x is loaded as it lies (no
/// zero-inserted window), the filters of Kd phases sit side by side on the PE columns when
/// C_out fits (C_out 64: two D phases per matmul, all 128 output partitions), and each
/// block's outputs are evicted into their phase positions and stored per phase group.
/// `options`: psum_buffers, evict_engine and chunk_positions (output positions per block).
void buildConvTransposePhases(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype,
                              const HbmView& x, const HbmView& filters,
                              const std::optional<HbmView>& bias, const HbmView& out,
                              const ConvOptions& options);

}  // namespace neuronsim::kernels
