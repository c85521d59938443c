#pragma once
// The tiled matmul kernel: lhsT [K, M], rhs [K, N] -> out [M, N] (fp32).

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// The registry entry of `matmul`.
KernelSpec matmulSpec();

}  // namespace neuronsim::kernels
