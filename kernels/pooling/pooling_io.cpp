// HBM <-> SBUF transfers of plane boxes for both layouts, and the double-buffered work loop.

#include "kernels/pooling/pooling_io.h"

#include <algorithm>

namespace neuronsim::kernels {

namespace {

constexpr int64_t kMaxCount = 65535;

}  // namespace

int64_t boxElements(const Box& box) { return box[0].size() * box[1].size() * box[2].size(); }

bool boxEmpty(const Box& box) { return box[0].empty() || box[1].empty() || box[2].empty(); }

std::vector<RowTile> rowTiles(int64_t planes, int32_t partitions) {
  std::vector<RowTile> tiles;
  for (int64_t first = 0; first < planes; first += partitions) {
    tiles.push_back({first, static_cast<int32_t>(std::min<int64_t>(partitions, planes - first))});
  }
  return tiles;
}

PlaneTensor::PlaneTensor(const HbmView& view, PoolLayout layout, int64_t channels)
    : canonical_(layout == PoolLayout::Ncdhw ? view : view.permute({0, 4, 1, 2, 3})),
      layout_(layout),
      channels_(channels) {}

void PlaneTensor::load(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                       const std::function<int32_t()>& queues) const {
  transfer(builder, rows, box, tile, false, queues);
}

void PlaneTensor::store(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                        const std::function<int32_t()>& queues) const {
  transfer(builder, rows, box, tile, true, queues);
}

void PlaneTensor::transfer(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                           bool toHbm, const std::function<int32_t()>& queues) const {
  auto spatial = [&box](HbmView view) {
    for (int a = 0; a < 3; ++a) view = view.slice(a + 1, box[a].lo, box[a].hi);
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
    const HbmView planes = canonical_.merge(0, 1).slice(0, rows.first, rows.first + rows.count);
    move(spatial(planes), compactView(tile.partitionSlice(0, rows.count)));
    return;
  }
  const int64_t end = rows.first + rows.count;
  for (int64_t row = rows.first; row < end;) {
    const int64_t b = row / channels_;
    const int64_t c0 = row % channels_;
    const int64_t c1 = std::min(channels_, c0 + (end - row));
    const HbmView segment = canonical_.select(0, b).slice(0, c0, c1);
    const Tile part = tile.partitionSlice(static_cast<int32_t>(row - rows.first), static_cast<int32_t>(c1 - c0));
    if (toHbm) {
      move(spatial(segment), compactView(part));
    } else {
      loadTransposed(builder, segment, box, part, queues);
    }
    row += c1 - c0;
  }
}

void PlaneTensor::loadTransposed(KernelBuilder& builder, const HbmView& segment, const Box& box,
                                 const Tile& part, const std::function<int32_t()>& queues) const {
  const HbmView positions = segment.permute({1, 2, 3, 0});  // [D, H, W, c], c contiguous
  const bool fullW = box[2].lo == 0 && box[2].hi == positions.size(2);
  const bool fullH = fullW && box[1].lo == 0 && box[1].hi == positions.size(1);
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
      transpose(slab.select(0, h - box[1].lo).slice(0, box[2].lo, box[2].hi), slabTile.select(0, h - box[1].lo));
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
    if (l.strides[a] == l.strides[a + 1] * l.shape[a + 1] && l.shape[a] * l.shape[a + 1] <= kMaxCount) {
      view = view.merge(a, a + 1);
    }
  }
  return view;
}

void runPipelined(int64_t count, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& computeAndStore) {
  if (count == 0) return;
  load(0, 0);
  for (int64_t item = 0; item < count; ++item) {
    if (item + 1 < count) load(item + 1, static_cast<int>((item + 1) % 2));
    computeAndStore(item, static_cast<int>(item % 2));
  }
}

}  // namespace neuronsim::kernels
