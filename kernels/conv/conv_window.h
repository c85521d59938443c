#pragma once
// Output chunks and the zero-padded input windows they read, shared by the conv programs.

#include <optional>
#include <vector>

#include "kernels/builder/kernel_builder.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// One piece of the output: batch, origin and extent (D, H, W).
struct Chunk {
  int64_t batch = 0;
  Int3 origin{};
  Int3 extent{};
};

/// Every chunk of `core`'s output in `size` pieces (edge pieces smaller), batch-major.
std::vector<Chunk> chunkList(const ConvCore& core, const Int3& size);

/// The [d, h, w] box of `tile` (whose free axes are exactly d, h, w) starting at `start`, `count`
/// elements `step` apart per axis; single-element axes are dropped.
Tile box(Tile tile, const Int3& start, const Int3& count, const Int3& step);

/// Fills `window` ([cs partitions; d, h, w] of one C_in tile) with the virtual input that `chunk`
/// reads, for channels [ci0, ci0 + cs) of `x`: x elements, and zeros where the window lies
/// outside x's range. Inserted zeros between x elements are not written (readers with input
/// dilation must step over them).
/// `stage` (same partitions; d, h, w), when given, receives the x elements first in one contiguous
/// DMA when the window has inserted zeros or a border; a copy on `engine` places them. It is
/// required with input dilation. Border zeros are memset on `engine` (GpSimd when it is Scalar)
/// unless `bordersZero` (the window's border already holds zeros from an earlier fill); a window
/// lying wholly outside x is always memset. `dma` places the load.
void loadWindow(KernelBuilder& b, const ConvCore& core, const HbmView& x, const Chunk& chunk,
                int64_t ci0, const Tile& window, const std::optional<Tile>& stage,
                isa::Engine engine = isa::Engine::GpSimd, bool bordersZero = false,
                DmaOptions dma = {});

/// Loads channels [c0, c0 + count) of `t` ([B, C, D, H, W]) over `chunk` into `tile`
/// ([min(count, P) partitions; count / P pieces, d, h, w], P = tileParts): one DMA
/// per P channels.
void loadChannelChunk(KernelBuilder& b, const HbmView& t, const Chunk& chunk, int64_t c0,
                      int64_t count, const Tile& tile);

/// Fills `column` ([cs partitions; d, h, w] = chunk.extent) with the x elements tap `tap` (d, h, w
/// indices) reads for every output of `chunk`, zeros where they fall into the padding (no input
/// dilation): a per-tap im2col by strided DMA. A tap that meets no x element anywhere in the chunk
/// writes nothing (no block reads it).
void loadTapColumn(KernelBuilder& b, const ConvCore& core, const HbmView& x, const Chunk& chunk,
                   int64_t ci0, const Int3& tap, const Tile& column);

}  // namespace neuronsim::kernels
