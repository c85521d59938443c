// Choosing D and H slabs for the spatial layout and reshaping HBM views into slab planes.

#include "kernels/pooling/pooling_slabs.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "isa/error.h"
#include "kernels/pooling/pooling_axis.h"

namespace neuronsim::kernels {

namespace {

/// NDHWC takes slabs automatically only when a D slice has at least this many positions.
constexpr int64_t kNdhwcSlabPositions = 512;
/// Auto takes halo slabs only for planes of at least this many elements.
constexpr int64_t kHaloPlaneElements = 4096;

/// Slab counts that cut spatial axis `a` into whole, non-overlapping windows (1 always).
std::vector<int64_t> slabCounts(const PoolingConfig& config, int a, int64_t most) {
  const int64_t n = config.input[a], k = config.kernel[a], s = config.stride[a];
  std::vector<int64_t> counts{1};
  if (k > s || config.padding[a] != 0 || n % s != 0) return counts;
  for (int64_t slabs = 2; slabs <= std::min(most, n / s); ++slabs) {
    if (n % slabs == 0 && (n / slabs) % s == 0) counts.push_back(slabs);
  }
  return counts;
}

}  // namespace

std::optional<SlabSplit> chooseSlabs(std::string_view kernel, const PoolingConfig& config,
                                     const PoolSchedule& schedule, int32_t partitions,
                                     bool haloFallback) {
  if (schedule.partitioning == PoolPartitioning::Channels) return std::nullopt;
  const bool asked = schedule.partitioning == PoolPartitioning::Spatial;
  if (!asked && 2 * config.planes() > partitions) return std::nullopt;
  // NDHWC slabs multiply the per-batch DMA transposes; they pay off only with large H x W
  // planes (2x16x16x16x4 avg backward: 24.3 us in slabs, 19.2 us in channels; 1x16x32x32x4
  // max forward: 23.7 against 43.8 us).
  const bool smallPlanes = config.input[1] * config.input[2] < kNdhwcSlabPositions;
  if (!asked && config.dataFormat == PoolLayout::Ndhwc && smallPlanes) return std::nullopt;
  const int64_t target = std::max<int64_t>(2, partitions / config.planes());
  SlabSplit best;
  if (config.dataFormat == config.outputFormat) {
    for (const int64_t d : slabCounts(config, 0, target)) {
      // NDHWC moves a slab's channels by DMA transposes per run of contiguous positions: H
      // slabs break every D slice into rows (1x16x32x32x2 avg backward: 17 -> 122 us).
      const int64_t mostH = config.dataFormat == PoolLayout::Ncdhw ? target / d : 1;
      for (const int64_t h : slabCounts(config, 1, mostH)) {
        if (d * h > best.slabs() || (d * h == best.slabs() && d > best.slabsD)) {
          best.slabsD = d;
          best.slabsH = h;
        }
      }
    }
  }
  if (best.slabs() == 1) {
    if (!asked || haloFallback) return std::nullopt;
    throw Error(fmt::format(
        "{}: layout spatial needs windows that do not overlap along D or H (kernel_size <= "
        "stride, padding 0), that axis cut into at least 2 slabs of whole windows, and "
        "data_format equal to output_format; or, for halo slabs, both layouts NCDHW and D or H "
        "cut into at least 2 slabs (max backward: H only unpadded)",
        kernel));
  }
  best.lengthD = config.input[0] / best.slabsD;
  best.lengthH = config.input[1] / best.slabsH;
  return best;
}

namespace {

/// Halo slab counts along axis `a` (1 always): whole outputs per slab (forward) or whole
/// strides of inputs (backward).
std::vector<int64_t> haloCounts(const PoolingConfig& config, int a, bool forward, int64_t most) {
  const int64_t n = config.input[a], s = config.stride[a], outputs = config.output()[a];
  std::vector<int64_t> counts{1};
  for (int64_t count = 2; count <= most; ++count) {
    const bool whole = forward ? outputs % count == 0 : n % count == 0 && (n / count) % s == 0;
    if (whole) counts.push_back(count);
  }
  return counts;
}

/// Axis `a` of `config` cut into `slabs` halo slabs; sets the virtual extent in `halo`.
HaloAxis haloAxis(const PoolingConfig& config, int a, bool forward, int64_t slabs,
                  PoolingConfig& halo) {
  const int64_t n = config.input[a], k = config.kernel[a], s = config.stride[a];
  const int64_t p = config.padding[a], outputs = config.output()[a];
  HaloAxis h;
  h.slabs = slabs;
  h.inputExtent = n;
  h.outputExtent = outputs;
  if (slabs == 1) {
    h.ownedCount = forward ? outputs : n;
    return h;
  }
  if (forward) {
    // Owned outputs [A, A + len): the first window starts at input A*s - p >= 0.
    const int64_t len = outputs / slabs, first = ceilDiv(p, s);
    h.ownedFirst = h.outputOrigin = first;
    h.ownedCount = h.outputStep = len;
    h.inputOrigin = first * s;
    h.inputStep = len * s;
    halo.input[a] = (first + len - 1) * s - p + k;
    return h;
  }
  // Owned inputs [B, B + len), B a multiple of s, with every output touching them (and its
  // window, for max backward's first match) inside the virtual axis.
  const int64_t len = n / slabs;
  int64_t first = 0;
  while (ceilDiv(first + p - k + 1, s) < 0 || ceilDiv(first + p - k + 1, s) * s < p) first += s;
  const int64_t lastOutput = floorDiv(first + len - 1 + p, s);
  h.ownedFirst = h.inputOrigin = first;
  h.ownedCount = h.inputStep = len;
  h.outputOrigin = first / s;
  h.outputStep = std::max<int64_t>(1, len / s);
  halo.input[a] = std::max(first + len, lastOutput * s - p + k);
  return h;
}

}  // namespace

std::optional<PoolingConfig> haloSlabConfig(const PoolingConfig& config,
                                            const PoolSchedule& schedule, HaloKind kind,
                                            int32_t partitions) {
  if (schedule.partitioning == PoolPartitioning::Channels) return std::nullopt;
  const bool asked = schedule.partitioning == PoolPartitioning::Spatial;
  if (!asked && 2 * config.planes() > partitions) return std::nullopt;
  // Small planes lose to the halo loads' extra DMAs (avg forward k3 s2 p1 on trn2: 1x16x8x8x8
  // 7.5 us in channels, 62.4 us in halo slabs; 1x1x16x16x16 24.2 against 19.4 us).
  const int64_t planeElements = config.input[0] * config.input[1] * config.input[2];
  if (!asked && planeElements < kHaloPlaneElements) return std::nullopt;
  if (config.dataFormat != PoolLayout::Ncdhw || config.outputFormat != PoolLayout::Ncdhw) {
    return std::nullopt;
  }
  const bool forward = kind == HaloKind::Forward;
  const int64_t most = partitions / config.planes();
  // Max backward loads D padding as NaN before / -inf after the tensor, which comes before
  // (after) every real tap of a window only along D, the outermost tap axis: H only unpadded
  // (then only windows outside the tensor, whose gradient is 0, read beyond H).
  const bool cutH = kind != HaloKind::MaxBackward || config.padding[1] == 0;
  int64_t bestD = 1, bestH = 1;
  for (const int64_t d : haloCounts(config, 0, forward, most)) {
    for (const int64_t h :
         cutH ? haloCounts(config, 1, forward, most / d) : std::vector<int64_t>{1}) {
      if (d * h > bestD * bestH || (d * h == bestD * bestH && d > bestD)) {
        bestD = d;
        bestH = h;
      }
    }
  }
  if (bestD * bestH == 1) return std::nullopt;
  PoolingConfig halo = config;
  halo.halo.active = true;
  halo.halo.axes[0] = haloAxis(config, 0, forward, bestD, halo);
  halo.halo.axes[1] = haloAxis(config, 1, forward, bestH, halo);
  halo.channels *= bestD * bestH;
  return halo;
}

PoolingConfig slabConfig(const PoolingConfig& config, const SlabSplit& split) {
  PoolingConfig slab = config;
  slab.input[0] = split.lengthD;
  slab.input[1] = split.lengthH;
  if (config.dataFormat == PoolLayout::Ncdhw) {
    slab.channels *= split.slabs();
  } else {
    slab.batch *= split.slabs();
  }
  return slab;
}

HbmView slabView(const HbmView& view, PoolLayout layout, const SlabSplit& split) {
  const int d = layout == PoolLayout::Ncdhw ? 2 : 1;
  // [.., slabsD, lengthD, slabsH, lengthH, ..] -> [.., slabsD, slabsH, lengthD, lengthH, ..]
  const HbmView cut = view.split(d + 1, {split.slabsH, view.size(d + 1) / split.slabsH})
                          .split(d, {split.slabsD, view.size(d) / split.slabsD});
  std::vector<int> order(static_cast<size_t>(cut.rank()));
  for (int a = 0; a < cut.rank(); ++a) order[static_cast<size_t>(a)] = a;
  std::swap(order[static_cast<size_t>(d + 1)], order[static_cast<size_t>(d + 2)]);
  const HbmView slabs = cut.permute(order);
  return layout == PoolLayout::Ncdhw ? slabs.merge(1, 2) : slabs.merge(0, 1);
}

}  // namespace neuronsim::kernels
