#pragma once
// What every tutorial kernel shares: tile views of HBM, DMA placement, the copy engine.

#include <cstdint>

#include "kernels/builder/kernel_builder.h"
#include "kernels/tutorials/loop_tensors.h"

namespace neuronsim::kernels {

/// Loads (nl.load, nisa.dma_copy into SBUF) are triggered from Sync on its round-robin queues.
constexpr DmaOptions kTutorialLoad{.queue = -1, .issue = isa::Engine::Sync};
/// Stores are triggered from GpSimd, idle in these kernels, so Sync's in-order stream of loads
/// never waits behind a store that waits for compute (the NKI compiler reorders them instead).
constexpr DmaOptions kTutorialStore{.queue = -1, .issue = isa::Engine::GpSimd};
/// The tutorials leave the engine of nl.copy, nisa.tensor_copy, nisa.memset and the SBUF
/// accumulation to the compiler; T2's profile of its fully blocked kernel shows VectorE doing
/// the accumulation, and we put all of them on VectorE.
constexpr isa::Engine kTutorialCopyEngine = isa::Engine::Vector;

/// Rows [r*rows, (r+1)*rows) and columns [c*cols, (c+1)*cols) of a 2-D HBM tensor.
inline HbmView tileOf(const HbmView& t, int64_t r, int64_t rows, int64_t c, int64_t cols) {
  return t.slice(0, r * rows, (r + 1) * rows).slice(1, c * cols, (c + 1) * cols);
}

}  // namespace neuronsim::kernels
