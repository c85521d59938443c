// Chooses spatial chunk extents that fit SBUF, then enumerates the chunks.

#include "kernels/pooling/pooling_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

/// Largest buffer extents over the chunks that cut every axis's `span` into pieces of `len`
/// (the last piece shorter).
ChunkExtents extentsFor(const std::array<PoolAxis, 3>& axes, ChunkBy by, const Spatial& len,
                        const std::array<Range, 3>& span) {
  ChunkExtents ext;
  for (int a = 0; a < 3; ++a) {
    const PoolAxis& ax = axes[a];
    ext.owned[a] = len[a];
    if (by == ChunkBy::Output) {
      ext.outputs[a] = len[a];
      ext.inputs[a] = std::min(ax.n, (len[a] - 1) * ax.s + ax.k);
      continue;
    }
    for (int64_t lo = span[a].lo; lo < span[a].hi; lo += len[a]) {
      const Range owned{lo, std::min(span[a].hi, lo + len[a])};
      const Range outs = ax.outputsTouching(owned);
      const Range read = outs.empty() ? owned : ax.inputsOf(outs);
      ext.outputs[a] = std::max(ext.outputs[a], outs.size());
      ext.inputs[a] =
          std::max(ext.inputs[a], std::max(read.hi, owned.hi) - std::min(read.lo, owned.lo));
    }
  }
  return ext;
}

/// Counts fit uint16 and the largest step a strided view of any box takes fits int16.
bool fitsAccessPatterns(const ChunkExtents& ext, const Spatial& stride) {
  Spatial most{};
  bool spans[3] = {false, false, false};
  for (const Spatial* box : {&ext.owned, &ext.outputs, &ext.inputs}) {
    for (int a = 0; a < 3; ++a) {
      if ((*box)[a] > kMaxApCount) return false;
      most[a] = std::max(most[a], (*box)[a]);
      spans[a] = spans[a] || (*box)[a] > 1;
    }
  }
  if (spans[0] && most[1] * most[2] * stride[0] > kMaxApStep) return false;
  if (spans[1] && most[2] * stride[1] > kMaxApStep) return false;
  return stride[2] <= kMaxApStep;
}

bool fits(const ChunkExtents& ext, const Spatial& stride, const ChunkBytes& bytes, int64_t budget) {
  return fitsAccessPatterns(ext, stride) && bytes(ext) <= budget;
}

/// The chunks along one axis: owned ranges of `len` elements covering `span`.
std::vector<Range> cut(Range span, int64_t len) {
  std::vector<Range> ranges;
  for (int64_t lo = span.lo; lo < span.hi; lo += len) {
    ranges.push_back({lo, std::min(span.hi, lo + len)});
  }
  return ranges;
}

}  // namespace

int64_t bufferBytes(int64_t elements, int64_t dtypeBytes) {
  constexpr int64_t kGranule = 64;
  if (elements > kMaxApCount * kMaxApCount) return int64_t{1} << 40;
  return ceilDiv(elements * dtypeBytes, kGranule) * kGranule;
}

int64_t pipelineChunks(int64_t rowTiles) {
  return rowTiles >= 4 ? 1 : ceilDiv(4, rowTiles);
}

std::array<PoolAxis, 3> poolAxes(const PoolingConfig& config) {
  std::array<PoolAxis, 3> axes;
  for (int a = 0; a < 3; ++a) {
    axes[a] = {config.input[a], config.kernel[a], config.stride[a], config.padding[a]};
  }
  return axes;
}

std::vector<PoolChunk> planChunks(std::string_view kernel, const PoolingConfig& config, ChunkBy by,
                                  const ChunkBytes& bytes, int64_t budget, int64_t wantChunks) {
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  Spatial full = by == ChunkBy::Input ? config.input : config.output();
  std::array<Range, 3> span{Range{0, full[0]}, Range{0, full[1]}, Range{0, full[2]}};
  for (int a = 0; a < 2 && config.halo.active; ++a) {
    const HaloAxis& h = config.halo.axes[static_cast<size_t>(a)];
    span[a] = {h.ownedFirst, h.ownedFirst + h.ownedCount};
    full[a] = h.ownedCount;
  }
  Spatial len = full;
  auto ok = [&](const Spatial& l) {
    return fits(extentsFor(axes, by, l, span), config.stride, bytes, budget);
  };
  auto grow = [&](int a) {
    int64_t good = len[a], bad = full[a] + 1;
    while (bad - good > 1) {
      const int64_t mid = good + (bad - good) / 2;
      Spatial trial = len;
      trial[a] = mid;
      (ok(trial) ? good : bad) = mid;
    }
    // Cuts on window boundaries (multiples of the stride) load no window twice.
    const int64_t s = config.stride[a];
    if (by == ChunkBy::Input && good < full[a] && good >= s) good -= good % s;
    len[a] = good;
  };
  // Cut D, then H, then W down to `floor` elements until a chunk fits. Backward kernels first
  // keep whole strides (a chunk then shares no output with its neighbours), then go to 1.
  auto cutDown = [&](bool wholeStrides) {
    len = full;
    for (int a = 0; a < 3 && !ok(len); ++a) {
      len[a] = wholeStrides ? std::min(full[a], config.stride[a]) : 1;
      if (ok(len)) grow(a);
    }
  };
  cutDown(by == ChunkBy::Input);
  if (!ok(len)) cutDown(false);
  if (!ok(len)) {
    throw Error(fmt::format(
        "{}: a single pooling window needs {} bytes per partition (or access-pattern steps "
        "above {}); {} bytes fit in SBUF",
        kernel, bytes(extentsFor(axes, by, len, span)), kMaxApStep, budget));
  }
  for (int a = 0; a < 3; ++a) grow(a);
  // Fewer chunks than wanted (a plane that fits, or an SBUF cut into 2-3 pieces): cut the
  // first axis that still spans more than one stride further, down to kMinChunkElements; an
  // SBUF-cut plane only along axes whose windows do not overlap (no halo read twice; max
  // backward k3 s1 p1 went from 724 to 900 us with it).
  const bool fitted = len == full;
  const int64_t have =
      ceilDiv(full[0], len[0]) * ceilDiv(full[1], len[1]) * ceilDiv(full[2], len[2]);
  for (int a = 0; a < 3 && wantChunks > have; ++a) {
    const int64_t step = by == ChunkBy::Input ? config.stride[a] : 1;
    if (len[a] <= step || (!fitted && config.kernel[a] > config.stride[a])) continue;
    auto largestBox = [&](const Spatial& l) {
      const ChunkExtents e = extentsFor(axes, by, l, span);
      return std::max(e.owned[0] * e.owned[1] * e.owned[2],
                      e.inputs[0] * e.inputs[1] * e.inputs[2]);
    };
    Spatial cut = len;
    cut[a] = std::min(len[a], ceilDiv(ceilDiv(len[a], ceilDiv(wantChunks, have)), step) * step);
    while (cut[a] < len[a] && largestBox(cut) < kMinChunkElements) ++cut[a];
    len = cut;
    break;
  }
  std::vector<PoolChunk> chunks;
  for (const Range& d : cut(span[0], len[0])) {
    for (const Range& h : cut(span[1], len[1])) {
      for (const Range& w : cut(span[2], len[2])) {
        PoolChunk chunk;
        chunk.owned = {d, h, w};
        for (int a = 0; a < 3; ++a) {
          if (by == ChunkBy::Input) {
            chunk.outputs[a] = axes[a].outputsTouching(chunk.owned[a]);
            chunk.inputs[a] = chunk.owned[a];
            if (chunk.outputs[a].empty()) continue;
            const Range read = axes[a].inputsOf(chunk.outputs[a]);
            chunk.inputs[a] = {std::min(read.lo, chunk.owned[a].lo),
                               std::max(read.hi, chunk.owned[a].hi)};
          } else {
            chunk.outputs[a] = chunk.owned[a];
            chunk.inputs[a] = axes[a].inputsOf(chunk.owned[a]);
          }
        }
        chunks.push_back(chunk);
      }
    }
  }
  return chunks;
}

}  // namespace neuronsim::kernels
