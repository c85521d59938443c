#pragma once
// How the conv core is tiled onto SBUF and PSUM: resident filter groups, input windows, blocks.

#include <cstdint>
#include <functional>
#include <optional>

#include "isa/dtype.h"
#include "isa/geometry.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// The tiling of one ConvCore. Extents are (D, H, W).
struct ConvPlan {
  int64_t ciTiles = 1;   ///< C_in tiles of up to 128 partitions (the contraction)
  int64_t ciParts = 1;   ///< partitions of the first C_in tile: min(C_in, 128)
  int64_t coGroup = 1;   ///< output channels whose filters are resident together
  Int3 chunk{1, 1, 1};   ///< output extent computed from one input window
  Int3 window{1, 1, 1};  ///< virtual-input extent of a full chunk's window
  Int3 stage{1, 1, 1};   ///< x_in extent a window can hold (staging tile, input dilation only)
  bool dilated = false;  ///< the core has input dilation
  /// staging tiles exist: a window with inserted zeros or a border is filled by a contiguous
  /// DMA to staging and a strided GpSimd copy
  bool staged = false;
  /// no dense window fits: one compact [chunk] column per tap (im2col by DMA); `window` then
  /// equals `chunk`
  bool perTap = false;
  int64_t pack = 1;  ///< taps per matmul: consecutive kw taps on partition slots (C_in <= 64)
  int64_t slotParts = 128;  ///< partitions per slot when pack > 1 (128 / pack)
  int64_t tapColumns = 1;   ///< filter columns per C_in tile: taps, or tap groups when packed
  Int3 phase{1, 1, 1};      ///< output period whose positions share the taps that meet x elements
  Int3 block{1, 1, 1};      ///< outputs of one PSUM accumulation, `phase` apart (at most 512)
};

/// The output period per axis after which the taps meeting x elements repeat:
/// inputDilation / gcd(stride, inputDilation) (1 without input dilation).
Int3 outputPhase(const ConvCore& core);

/// Window extent along `axis` for `outputs` outputs.
int64_t windowExtent(const ConvCore& core, int axis, int64_t outputs);

/// Axis steps of a row-major [d, h, w] box fit the free-axis fields (int16 steps, uint16 sizes)
/// where they matter, with the D and H steps scaled by `scaleD` and `scaleH`.
bool stepsFit(const Int3& extent, int64_t scaleD = 1, int64_t scaleH = 1);
/// The largest chunk of `out` that `fits` (monotone), shrinking D first, then H, then W.
std::optional<Int3> largestChunk(const Int3& out, const std::function<bool(const Int3&)>& fits);
/// The output box of one accumulation inside `chunk` (at most `maxFree` positions, `phase` apart)
/// whose strided view of a `window`-sized tile fits the access-pattern fields.
Int3 blockFor(const ConvCore& core, const Int3& chunk, const Int3& window, int64_t maxFree,
              const Int3& phase = {1, 1, 1});

/// Chooses the tiling for `dtype` within `geometry`'s SBUF. Throws neuronsim::Error naming the
/// kernel and the culprit when even the smallest tiling does not fit.
ConvPlan planConv(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
