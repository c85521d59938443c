#pragma once
// Tiling plan of a pooling kernel: row tiles of (batch, channel) planes and spatial chunks.

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kernels/pooling/pooling_axis.h"
#include "kernels/pooling/pooling_config.h"

namespace neuronsim::kernels {

/// The largest per-axis extents (elements) a chunk's buffers can have.
struct ChunkExtents {
  Spatial owned{};    ///< the box the chunk produces (input box for backward, output for forward)
  Spatial outputs{};  ///< outputs read or written by the chunk
  Spatial inputs{};   ///< inputs read by the chunk (halo included)
};

/// One spatial chunk. Backward kernels own an input box and read the outputs touching it
/// (and, for max, the inputs those outputs read); forward kernels own an output box and read
/// its windows' inputs.
struct PoolChunk {
  std::array<Range, 3> owned;
  std::array<Range, 3> outputs;
  std::array<Range, 3> inputs;
};

/// Which box a chunk owns.
enum class ChunkBy : uint8_t { Input, Output };

/// Bytes per partition one buffer set needs for chunks of these extents.
using ChunkBytes = std::function<int64_t(const ChunkExtents&)>;

/// The chunks covering the problem, cutting D as coarsely as possible, then H, then W, so
/// that `bytes` fits `budget` and every extent fits an access-pattern count (<= 65535).
/// When the problem fits in fewer than `wantChunks` chunks, D is cut further (keeping at least
/// kMinChunkElements owned elements per chunk) so loads, compute and stores can overlap.
/// Throws neuronsim::Error naming `kernel` when even a single element does not fit.
std::vector<PoolChunk> planChunks(std::string_view kernel, const PoolingConfig& config, ChunkBy by,
                                  const ChunkBytes& bytes, int64_t budget, int64_t wantChunks = 1);

/// Chunks worth having per row tile so a kernel with `rowTiles` tiles has ~4 work items.
int64_t pipelineChunks(int64_t rowTiles);

/// Smallest owned box (elements per partition) the pipelining cut goes down to: 4 KiB of
/// fp32, where DMA transfers stop being overhead-bound (reference 1.4).
inline constexpr int64_t kMinChunkElements = 1024;

/// The three axes of `config`.
std::array<PoolAxis, 3> poolAxes(const PoolingConfig& config);

/// Largest element count one access-pattern dimension may hold.
inline constexpr int64_t kMaxApCount = 65535;
/// SBUF bytes one buffer of `elements` takes, rounded up to the allocation granule (64 B);
/// effectively unlimited when `elements` exceeds an access-pattern count.
int64_t bufferBytes(int64_t elements, int64_t dtypeBytes);

/// Largest element step of an on-chip access-pattern dimension.
inline constexpr int64_t kMaxApStep = 32767;

}  // namespace neuronsim::kernels
