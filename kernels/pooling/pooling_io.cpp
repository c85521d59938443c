// HBM <-> SBUF transfers of plane boxes for both layouts.

#include "kernels/pooling/pooling_io.h"

#include <algorithm>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kMaxCount = 65535;

/// `view` (5-D or slabView's 6-D) as PlaneTensor's canonical view.
HbmView canonicalView(const HbmView& view, PoolLayout layout) {
  const bool slabs = view.rank() == 6;
  if (layout == PoolLayout::Ncdhw) {
    const HbmView planes = view.merge(0, 1);
    return slabs ? planes : planes.split(0, {planes.size(0), 1});
  }
  if (slabs) return view.permute({0, 1, 5, 2, 3, 4});
  return view.permute({0, 4, 1, 2, 3}).split(0, {view.size(0), 1});
}

}  // namespace

int64_t boxElements(const Box& box) {
  return box[0].size() * box[1].size() * box[2].size();
}

bool boxEmpty(const Box& box) {
  return box[0].empty() || box[1].empty() || box[2].empty();
}

int32_t rowPartitions(const isa::Geometry& geometry, PoolLayout stored, int64_t planes) {
  const int64_t rows =
      stored == PoolLayout::Ndhwc ? geometry.maxContraction() : int64_t{geometry.partitions};
  return static_cast<int32_t>(std::min(rows, planes));
}

std::vector<RowTile> rowTiles(int64_t planes, int32_t partitions) {
  std::vector<RowTile> tiles;
  for (int64_t first = 0; first < planes; first += partitions) {
    tiles.push_back({first, static_cast<int32_t>(std::min<int64_t>(partitions, planes - first))});
  }
  return tiles;
}

HaloMap inputHalo(const PoolingConfig& config, float fillBefore, float fillAfter) {
  HaloMap m{config.halo.active, {}, fillBefore, fillAfter};
  for (size_t a = 0; a < 2; ++a) {
    const HaloAxis& h = config.halo.axes[a];
    m.axes[a] = {h.slabs, h.inputOrigin, h.inputStep, h.inputExtent};
  }
  return m;
}

HaloMap outputHalo(const PoolingConfig& config) {
  HaloMap m{config.halo.active, {}, 0.0f, 0.0f};
  for (size_t a = 0; a < 2; ++a) {
    const HaloAxis& h = config.halo.axes[a];
    m.axes[a] = {h.slabs, h.outputOrigin, h.outputStep, h.outputExtent};
  }
  return m;
}

PlaneTensor::PlaneTensor(const HbmView& view, PoolLayout layout, int64_t channels, HaloMap halo)
    : halo_(halo), canonical_(canonicalView(view, layout)), layout_(layout), channels_(channels) {}

void PlaneTensor::load(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                       const std::function<int32_t()>& queues) const {
  builder.setNote("load");
  transfer(builder, rows, box, tile, false, queues);
}

void PlaneTensor::store(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                        const std::function<int32_t()>& queues) const {
  builder.setNote("store");
  transfer(builder, rows, box, tile, true, queues);
}

void PlaneTensor::transfer(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                           bool toHbm, const std::function<int32_t()>& queues) const {
  if (halo_.active) {
    transferHalo(builder, rows, box, tile, toHbm, queues);
    return;
  }
  auto spatial = [&box](HbmView view) {
    for (int a = 0; a < 3; ++a) view = view.slice(view.rank() - 3 + a, box[a].lo, box[a].hi);
    return view;
  };
  auto move = [&](const HbmView& hbm, const Tile& part) {
    const DmaOptions options{queues(), toHbm ? kStoreIssuer : kLoadIssuer};
    if (toHbm) {
      builder.dmaCopy(hbm, part, options);
    } else {
      builder.dmaCopy(part, hbm, options);
    }
  };
  if (layout_ == PoolLayout::Ncdhw) {
    // Whole groups of S sub-planes in one transfer ([outer rows, S, box] in HBM), the partial
    // groups at either end on their own.
    const int64_t sub = canonical_.size(1), end = rows.first + rows.count;
    for (int64_t row = rows.first; row < end;) {
      const int64_t outer = row / sub, inner = row % sub;
      const int64_t whole = inner == 0 ? (end - row) / sub : 0;
      const HbmView planes =
          whole > 0 ? canonical_.slice(0, outer, outer + whole)
                    : canonical_.select(0, outer).slice(0, inner, std::min(sub, inner + end - row));
      const int64_t count = whole > 0 ? whole * sub : planes.size(0);
      move(spatial(planes), compactView(tile.partitionSlice(static_cast<int32_t>(row - rows.first),
                                                            static_cast<int32_t>(count))));
      row += count;
    }
    return;
  }
  if (toHbm) {
    storeTransposed(builder, rows, box, tile, queues);
    return;
  }
  const int64_t end = rows.first + rows.count;
  for (int64_t row = rows.first; row < end;) {
    const int64_t b = row / channels_;
    const int64_t c0 = row % channels_;
    const int64_t c1 = std::min(channels_, c0 + (end - row));
    const HbmView segment = batchView(b).slice(0, c0, c1);
    const Tile part =
        tile.partitionSlice(static_cast<int32_t>(row - rows.first), static_cast<int32_t>(c1 - c0));
    loadTransposed(builder, segment, box, part, queues);
    row += c1 - c0;
  }
}

void PlaneTensor::loadTransposed(KernelBuilder& builder, const HbmView& segment, const Box& box,
                                 const Tile& part, const std::function<int32_t()>& queues) const {
  const HbmView positions = segment.permute({1, 2, 3, 0});  // [D, H, W, c], c contiguous
  const bool fullW = box[2].lo == 0 && box[2].hi == positions.size(2);
  // H slabs (S > 1) leave gaps between D slices: whole-box runs only without them.
  const bool fullH =
      fullW && canonical_.size(1) == 1 && box[1].lo == 0 && box[1].hi == positions.size(1);
  auto transpose = [&](const HbmView& rowsOfC, const Tile& to) {
    builder.dmaTranspose(compactView(to), rowsOfC, DmaOptions{queues(), kLoadIssuer});
  };
  if (fullH) {
    transpose(positions.slice(0, box[0].lo, box[0].hi).merge(0, 2), part);
    return;
  }
  for (int64_t d = box[0].lo; d < box[0].hi; ++d) {
    const HbmView slab = positions.select(0, d).slice(0, box[1].lo, box[1].hi);
    const Tile slabTile = part.select(0, d - box[0].lo);
    if (fullW) {
      transpose(slab.merge(0, 1), slabTile);
      continue;
    }
    for (int64_t h = box[1].lo; h < box[1].hi; ++h) {
      transpose(slab.select(0, h - box[1].lo).slice(0, box[2].lo, box[2].hi),
                slabTile.select(0, h - box[1].lo));
    }
  }
}

std::vector<PlaneTensor::Fill> PlaneTensor::haloFills(const Box& box) const {
  std::vector<Fill> fills;
  if (!halo_.active) return fills;
  // H first: D's fill wins where both lie outside (max backward's D padding must stay NaN or
  // -inf whatever H holds).
  for (int a : {1, 0}) {
    const HaloMap::Axis& x = halo_.axes[static_cast<size_t>(a)];
    const Range r = box[a];
    const bool edges = std::max<int64_t>(0, ceilDiv(x.origin - r.lo, x.step)) > 0 ||
                       floorDiv(x.extent - r.hi + x.origin, x.step) + 1 < x.slabs;
    if (!edges) continue;
    // Positions some slab reads outside the tensor start as the fill; the DMAs overwrite the
    // partitions that have data there.
    const int64_t before = std::min(r.hi, x.origin);
    const int64_t after = std::max(r.lo, x.extent + x.origin - (x.slabs - 1) * x.step);
    if (before > r.lo) fills.push_back({a, {0, before - r.lo}, halo_.fillBefore});
    if (after < r.hi) fills.push_back({a, {after - r.lo, r.size()}, halo_.fillAfter});
  }
  return fills;
}

void PlaneTensor::transferHalo(KernelBuilder& builder, RowTile rows, const Box& box,
                               const Tile& tile, bool toHbm,
                               const std::function<int32_t()>& queues) const {
  const HaloMap& m = halo_;
  // Per axis (D, H): slabs [inLo, inHi) have the whole box inside the tensor.
  std::array<int64_t, 2> inLo{}, inHi{};
  bool edges = false;
  for (size_t a : {size_t{1}, size_t{0}}) {
    const HaloMap::Axis& x = m.axes[a];
    const Range r = box[a];
    inLo[a] = std::max<int64_t>(0, ceilDiv(x.origin - r.lo, x.step));
    inHi[a] = floorDiv(x.extent - r.hi + x.origin, x.step) + 1;
    edges = edges || inLo[a] > 0 || inHi[a] < x.slabs;
  }
  for (const Fill& f : haloFills(box)) {
    builder.memset(compactView(tile.slice(f.axis, f.range.lo, f.range.hi)), f.value,
                   isa::Engine::GpSimd);
  }
  if (edges && toHbm) throw Error("pooling: a halo slab store reaches outside the tensor");
  // The part of the box slab j has inside the tensor along axis a.
  auto inside = [&](size_t a, int64_t j) {
    const HaloMap::Axis& x = m.axes[a];
    return Range{std::max(box[a].lo, x.origin - j * x.step),
                 std::min(box[a].hi, x.extent + x.origin - j * x.step)};
  };
  // `count` D slabs from `jd` (H slab `jh`) of `plane`, their parts `dPart` x `hPart`, to or
  // from the tile's partitions from `row`: HBM partition step = the D slab step.
  auto move = [&](int64_t plane, int64_t jd, int64_t count, int64_t jh, Range dPart, Range hPart,
                  int64_t row) {
    const HaloMap::Axis &xd = m.axes[0], &xh = m.axes[1];
    const HbmView planeView =
        canonical_.select(0, plane).select(0, 0).slice(2, box[2].lo, box[2].hi);
    StridedLayout l = planeView.layout();
    l.offset += (dPart.lo - xd.origin + jd * xd.step) * l.strides[0] +
                (hPart.lo - xh.origin + jh * xh.step) * l.strides[1];
    l.shape[0] = dPart.size();
    l.shape[1] = hPart.size();
    l.shape.insert(l.shape.begin(), count);
    l.strides.insert(l.strides.begin(), xd.step * l.strides[0]);
    const HbmView hbm(planeView.tensor(), planeView.dtype(), l, planeView.name());
    const Tile part = compactView(
        tile.partitionSlice(static_cast<int32_t>(row - rows.first), static_cast<int32_t>(count))
            .slice(0, dPart.lo - box[0].lo, dPart.hi - box[0].lo)
            .slice(1, hPart.lo - box[1].lo, hPart.hi - box[1].lo));
    const DmaOptions options{queues(), toHbm ? kStoreIssuer : kLoadIssuer};
    if (toHbm) {
      builder.dmaCopy(hbm, part, options);
    } else {
      builder.dmaCopy(part, hbm, options);
    }
  };
  const int64_t slabsD = m.axes[0].slabs, perPlane = slabsD * m.axes[1].slabs;
  const int64_t end = rows.first + rows.count;
  for (int64_t row = rows.first; row < end;) {
    // Rows of one (plane, H slab): D slabs [first, last).
    const int64_t plane = row / perPlane, jh = (row % perPlane) / slabsD;
    const int64_t first = row % slabsD, last = std::min(slabsD, first + (end - row));
    const Range hPart = inside(1, jh);
    if (!hPart.empty()) {
      const int64_t midLo = std::clamp(inLo[0], first, last);
      const int64_t midHi = std::clamp(inHi[0], midLo, last);
      if (midHi > midLo) move(plane, midLo, midHi - midLo, jh, box[0], hPart, row + midLo - first);
      for (int64_t jd = first; jd < last; ++jd) {
        if (jd >= midLo && jd < midHi) continue;
        const Range dPart = inside(0, jd);
        if (!dPart.empty()) move(plane, jd, 1, jh, dPart, hPart, row + jd - first);
      }
    }
    row += last - first;
  }
}

HbmView PlaneTensor::batchView(int64_t b) const {
  const int64_t sub = canonical_.size(1);
  return canonical_.select(0, b / sub).select(0, b % sub);
}

std::vector<PlaneTensor::Run> PlaneTensor::runs(const Box& box) const {
  const int rank = canonical_.rank();
  const bool fullW = box[2].lo == 0 && box[2].hi == canonical_.size(rank - 1);
  const bool fullH =
      fullW && canonical_.size(1) == 1 && box[1].lo == 0 && box[1].hi == canonical_.size(rank - 2);
  if (fullH) return {{0, boxElements(box), -1, -1}};
  std::vector<Run> out;
  int64_t flat = 0;
  for (int64_t d = box[0].lo; d < box[0].hi; ++d) {
    if (fullW) {
      out.push_back({flat, box[1].size() * box[2].size(), d, -1});
      flat += out.back().length;
      continue;
    }
    for (int64_t h = box[1].lo; h < box[1].hi; ++h) {
      out.push_back({flat, box[2].size(), d, h});
      flat += box[2].size();
    }
  }
  return out;
}

HbmView PlaneTensor::runView(const HbmView& segment, const Box& box, const Run& run) const {
  const HbmView positions = segment.permute({1, 2, 3, 0});  // [D, H, W, c], c contiguous
  if (run.d < 0) return positions.slice(0, box[0].lo, box[0].hi).merge(0, 2);
  const HbmView slab = positions.select(0, run.d);
  if (run.h < 0) return slab.slice(0, box[1].lo, box[1].hi).merge(0, 1);
  return slab.select(0, run.h).slice(0, box[2].lo, box[2].hi);
}

void PlaneTensor::storeTransposed(KernelBuilder& builder, RowTile rows, const Box& box,
                                  const Tile& tile, const std::function<int32_t()>& queues) const {
  // Each transpose moves up to one PE array's worth of positions onto the partitions.
  const int64_t block = builder.geometry().maxStationaryFree();
  const int64_t bankElements = builder.geometry().psumBankBytes() / 4;
  if (psum_.size() == 0)
    psum_ = BufferRing::psum(builder, 2, {block, bankElements}, isa::Dtype::Fp32, "ndhwc_out");
  const Tile flat = tile.reshape({boxElements(box)});
  const int64_t width = rows.count;
  const int64_t groups = bankElements / width;
  struct Segment {
    HbmView view;
    int64_t start, count;
  };
  std::vector<Segment> segments;
  for (int64_t row = rows.first; row < rows.first + rows.count;) {
    const int64_t b = row / channels_, c0 = row % channels_;
    const int64_t c1 = std::min(channels_, c0 + (rows.first + rows.count - row));
    segments.push_back({batchView(b).slice(0, c0, c1), row - rows.first, c1 - c0});
    row += c1 - c0;
  }
  for (const Run& run : runs(box)) {
    for (int64_t q = 0; q < run.length; q += block * groups) {
      const Tile& bank = psum_.next();
      const int64_t span = std::min(block * groups, run.length - q);
      for (int64_t g = 0; g * block < span; ++g) {
        const int64_t first = q + g * block, count = std::min(block, span - g * block);
        builder.transpose(bank.partitionSlice(0, static_cast<int32_t>(count))
                              .slice(0, g * width, (g + 1) * width),
                          flat.slice(0, run.flat + first, run.flat + first + count),
                          isa::Engine::Tensor);
      }
      const int64_t full = span / block, rest = span % block;
      for (const Segment& seg : segments) {
        const HbmView hbm = runView(seg.view, box, run);
        const DmaOptions options{queues(), kStoreIssuer};
        if (full > 0) {
          const HbmView to =
              hbm.slice(0, q, q + full * block).split(0, {full, block}).permute({1, 0, 2});
          const Tile from = bank.slice(0, 0, full * width)
                                .reshape({full, width})
                                .slice(1, seg.start, seg.start + seg.count);
          builder.dmaCopy(to, from, options);
        }
        if (rest > 0) {
          const HbmView to = hbm.slice(0, q + full * block, q + span);
          const Tile from =
              bank.partitionSlice(0, static_cast<int32_t>(rest))
                  .slice(0, full * width + seg.start, full * width + seg.start + seg.count);
          builder.dmaCopy(to, from, options);
        }
      }
    }
  }
}

Tile boxTile(const Tile& flat, int32_t rows, const Box& box) {
  return flat.partitionSlice(0, rows)
      .slice(0, 0, boxElements(box))
      .reshape({box[0].size(), box[1].size(), box[2].size()});
}

Tile compactView(Tile view) {
  for (int a = view.rank() - 1; a >= 0 && view.rank() > 1; --a) {
    if (view.size(a) == 1) view = view.select(a, 0);
  }
  for (int a = view.rank() - 2; a >= 0; --a) {
    const StridedLayout& l = view.layout();
    if (l.strides[a] == l.strides[a + 1] * l.shape[a + 1] &&
        l.shape[a] * l.shape[a + 1] <= kMaxCount) {
      view = view.merge(a, a + 1);
    }
  }
  return view;
}

}  // namespace neuronsim::kernels
