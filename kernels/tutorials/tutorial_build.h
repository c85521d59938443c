#pragma once
// The NKI matmul tutorial kernels, stage by stage: out [M, N] = lhsT[K, M]^T @ rhs[K, N].

#include <cstdint>

#include "kernels/builder/kernel_builder.h"

namespace neuronsim::kernels {

/// Tile sizes of every tutorial kernel (nl.tile_size: gemm_stationary_fmax, pmax,
/// gemm_moving_fmax).
constexpr int64_t kTutorialTileM = 128;
constexpr int64_t kTutorialTileK = 128;
constexpr int64_t kTutorialTileN = 512;

/// Tiles per block along M, N and K (the tutorials' TILES_IN_BLOCK_*).
struct TutorialBlocks {
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
};

/// How a variant is instantiated: its blocks, its staging dtype, its buffering.
struct TutorialOptions {
  TutorialBlocks blocks;
  /// Dtype of the SBUF tile a PSUM result is copied into before the store in the tiled and
  /// hoisted kernels (T1: the output dtype, T2: fp32).
  isa::Dtype staging = isa::Dtype::Fp32;
  /// Most buffers a loop-local tensor gets (allocateLoopTensors); 2 = double buffering.
  int loopBuffers = 4;
};

/// The "tiled" kernel (T1 "Tiling matrix multiplications", T2 "Writing the kernel"): both
/// operand tiles loaded in the innermost k loop. Needs K and M multiples of 128, N of 512.
void buildTutorialTiled(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                        const HbmView& out, const TutorialOptions& options);
/// The "hoisted loads" kernel (T1 "Optimization 1", T2 "Analyzing the kernel"): a whole lhsT
/// column of K tiles loaded per m, a whole rhs column per n. Same shape rules as tiled.
void buildTutorialHoisted(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                          const HbmView& out, const TutorialOptions& options);
/// T1 "Optimization 2": blocks of `blocks.m` lhsT columns and `blocks.n` rhs columns (the
/// tutorial's 2 and 2; `blocks.k` unused). Needs K % 128, M % (128 m), N % (512 n) == 0.
void buildTutorialBlockedFree(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                              const HbmView& out, const TutorialOptions& options);
/// T1 "Optimization 3" (nki_matmul_fully_optimized_): all three dimensions blocked, partial
/// sums accumulated in SBUF result tiles, packed stores. Needs M % (128 m), N % (512 n),
/// K % (128 k) == 0.
void buildTutorialOptimized(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                            const HbmView& out, const TutorialOptions& options);

}  // namespace neuronsim::kernels
