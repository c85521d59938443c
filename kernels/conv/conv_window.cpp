// Chunk lists, tile boxes, and window loads: memset where the window holds zeros, then one DMA
// (or a DMA to staging plus a strided scatter when zeros are inserted between x elements).
#include "kernels/conv/conv_window.h"

#include <algorithm>

#include "isa/size_limits.h"
#include "kernels/conv/conv_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::ceilDiv;
using isa::floorDiv;

/// The part of x a window holds, per axis.
struct WindowFill {
  Int3 first{};          // first x index
  Int3 count{};          // x elements
  Int3 position{};       // window coordinate of `first`
  Int3 extent{};         // window extent
  Int3 lowEnd{};         // window coordinates below this lie before x[0]
  Int3 highStart{};      // window coordinates from this on lie after x's last element
  bool complete = true;  // every window coordinate lies inside x's range (no border)
  bool empty = false;
};

WindowFill fillOf(const ConvCore& core, const Chunk& chunk) {
  WindowFill f;
  for (int a = 0; a < 3; ++a) {
    const int64_t z0 = chunk.origin[a] * core.stride[a];
    const int64_t idl = core.inputDilation[a];
    f.extent[a] = windowExtent(core, a, chunk.extent[a]);
    const int64_t lo = std::max<int64_t>(0, ceilDiv(z0 - core.padLo[a], idl));
    const int64_t hi =
        std::min(core.in[a] - 1, floorDiv(z0 + f.extent[a] - 1 - core.padLo[a], idl));
    f.first[a] = lo;
    f.count[a] = std::max<int64_t>(0, hi - lo + 1);
    f.position[a] = core.padLo[a] + lo * idl - z0;
    if (f.count[a] == 0) f.empty = true;
    f.lowEnd[a] = std::clamp<int64_t>(core.padLo[a] - z0, 0, f.extent[a]);
    f.highStart[a] = std::clamp<int64_t>(core.padLo[a] + (core.in[a] - 1) * idl - z0 + 1,
                                         f.lowEnd[a], f.extent[a]);
    if (f.lowEnd[a] > 0 || f.highStart[a] < f.extent[a]) f.complete = false;
  }
  return f;
}

}  // namespace

std::vector<Chunk> chunkList(const ConvCore& core, const Int3& size) {
  std::vector<Chunk> list;
  for (int64_t n = 0; n < core.batch; ++n)
    for (int64_t d = 0; d < core.out[0]; d += size[0])
      for (int64_t h = 0; h < core.out[1]; h += size[1])
        for (int64_t w = 0; w < core.out[2]; w += size[2])
          list.push_back({n,
                          {d, h, w},
                          {std::min(size[0], core.out[0] - d), std::min(size[1], core.out[1] - h),
                           std::min(size[2], core.out[2] - w)}});
  return list;
}

Tile box(Tile tile, const Int3& start, const Int3& count, const Int3& step) {
  for (int a = 2; a >= 0; --a) {
    if (count[a] == 1) {
      tile = tile.select(a, start[a]);
    } else {
      tile = tile.slice(a, start[a], start[a] + (count[a] - 1) * step[a] + 1, step[a]);
    }
  }
  return tile;
}

void loadWindow(KernelBuilder& b, const ConvCore& core, const HbmView& x, const Chunk& chunk,
                int64_t ci0, const Tile& window, const std::optional<Tile>& stage,
                isa::Engine engine, bool bordersZero, DmaOptions dma) {
  const isa::Engine zeroEngine = engine == isa::Engine::Scalar ? isa::Engine::GpSimd : engine;
  const WindowFill fill = fillOf(core, chunk);
  const Int3 zero{0, 0, 0}, one{1, 1, 1};
  if (fill.empty) {
    b.memset(box(window, zero, fill.extent, one), 0.0f, zeroEngine);
    return;
  }
  for (int a = 0; a < 3 && !fill.complete && !bordersZero; ++a) {
    Int3 start = zero, count = fill.extent;
    if (fill.lowEnd[a] > 0) {
      count[a] = fill.lowEnd[a];
      b.memset(box(window, start, count, one), 0.0f, zeroEngine);
    }
    if (fill.highStart[a] < fill.extent[a]) {
      start[a] = fill.highStart[a];
      count[a] = fill.extent[a] - fill.highStart[a];
      b.memset(box(window, start, count, one), 0.0f, zeroEngine);
    }
  }
  const HbmView src = x.select(0, chunk.batch)
                          .slice(0, ci0, ci0 + window.partitions())
                          .slice(1, fill.first[0], fill.first[0] + fill.count[0])
                          .slice(2, fill.first[1], fill.first[1] + fill.count[1])
                          .slice(3, fill.first[2], fill.first[2] + fill.count[2]);
  const bool dilated =
      core.inputDilation[0] > 1 || core.inputDilation[1] > 1 || core.inputDilation[2] > 1;
  if (!stage || (fill.complete && !dilated)) {
    b.dmaCopy(box(window, fill.position, fill.count, one), src, dma);
    return;
  }
  const Tile staged = box(*stage, zero, fill.count, one);
  b.dmaCopy(staged, src, dma);
  b.tensorCopy(box(window, fill.position, fill.count, core.inputDilation), staged, engine);
}

void loadChannelChunk(KernelBuilder& b, const HbmView& t, const Chunk& chunk, int64_t c0,
                      int64_t count, const Tile& tile) {
  const int64_t parts = tileParts(b.geometry());
  for (int64_t u = 0; u * parts < count; ++u) {
    const int64_t first = c0 + u * parts, cu = std::min(parts, count - u * parts);
    const Tile dst = box(tile.partitionSlice(0, static_cast<int32_t>(cu)).select(0, u), {0, 0, 0},
                         chunk.extent, {1, 1, 1});
    b.dmaCopy(dst, t.select(0, chunk.batch)
                       .slice(0, first, first + cu)
                       .slice(1, chunk.origin[0], chunk.origin[0] + chunk.extent[0])
                       .slice(2, chunk.origin[1], chunk.origin[1] + chunk.extent[1])
                       .slice(3, chunk.origin[2], chunk.origin[2] + chunk.extent[2]));
  }
}

void loadTapColumn(KernelBuilder& b, const ConvCore& core, const HbmView& x, const Chunk& chunk,
                   int64_t ci0, const Int3& tap, const Tile& column) {
  const Int3 zero{0, 0, 0}, one{1, 1, 1};
  Int3 first{}, count{}, xFirst{};
  bool empty = false;
  for (int a = 0; a < 3; ++a) {
    const int64_t s = core.stride[a], offset = tap[a] * core.dilation[a] - core.padLo[a];
    const int64_t lo = std::max(chunk.origin[a], ceilDiv(-offset, s));
    const int64_t hi =
        std::min(chunk.origin[a] + chunk.extent[a] - 1, floorDiv(core.in[a] - 1 - offset, s));
    first[a] = lo - chunk.origin[a];
    count[a] = std::max<int64_t>(0, hi - lo + 1);
    xFirst[a] = lo * s + offset;
    empty = empty || count[a] == 0;
  }
  if (empty) return;
  for (int a = 0; a < 3; ++a) {
    Int3 start = zero, extent = chunk.extent;
    if (first[a] > 0) {
      extent[a] = first[a];
      b.memset(box(column, start, extent, one), 0.0f, isa::Engine::GpSimd);
    }
    if (first[a] + count[a] < chunk.extent[a]) {
      start[a] = first[a] + count[a];
      extent[a] = chunk.extent[a] - start[a];
      b.memset(box(column, start, extent, one), 0.0f, isa::Engine::GpSimd);
    }
  }
  HbmView src = x.select(0, chunk.batch).slice(0, ci0, ci0 + column.partitions());
  for (int a = 0; a < 3; ++a)
    src = src.slice(a + 1, xFirst[a], xFirst[a] + (count[a] - 1) * core.stride[a] + 1,
                    core.stride[a]);
  b.dmaCopy(box(column, first, count, one), src);
}

}  // namespace neuronsim::kernels
