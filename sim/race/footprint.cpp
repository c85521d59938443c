// Bounding boxes and exact byte overlap of access patterns.
#include "sim/race/footprint.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace neuronsim::sim {
namespace {

constexpr int64_t kExactLimit = int64_t{1} << 22;

/// The free-axis dims, with HBM's partition axis as an outer dim.
std::vector<isa::Dim> flatDims(const isa::AccessPattern& ap) {
  std::vector<isa::Dim> dims;
  if (ap.space == isa::Space::Hbm) dims.push_back({ap.partitionStep, ap.partitionCount});
  dims.insert(dims.end(), ap.dims.begin(), ap.dims.end());
  return dims;
}

int64_t countOf(const std::vector<isa::Dim>& dims) {
  int64_t n = 1;
  for (const isa::Dim& d : dims) n *= std::max<int64_t>(d.num, 0);
  return n;
}

/// Calls fn(elementOffset) for each element (offsets in elements, before `offset`).
template <typename Fn>
void forEachElement(const std::vector<isa::Dim>& dims, Fn&& fn) {
  const size_t k = dims.size();
  std::vector<int64_t> idx(k, 0);
  if (countOf(dims) == 0) return;
  int64_t off = 0;
  while (true) {
    fn(off);
    size_t j = k;
    while (j > 0) {
      --j;
      if (++idx[j] < dims[j].num) {
        off += dims[j].step;
        break;
      }
      off -= dims[j].step * (dims[j].num - 1);
      idx[j] = 0;
      if (j == 0) return;
    }
    if (k == 0) return;
  }
}

}  // namespace

Footprint footprintOf(const isa::AccessPattern& ap) {
  Footprint f;
  f.space = ap.space;
  f.tensor = ap.space == isa::Space::Hbm ? ap.tensor : -1;
  int64_t lo = 0, hi = 0;  // element span relative to offset
  auto extend = [&](int64_t step, int64_t num) {
    if (num <= 1) return;
    const int64_t span = step * (num - 1);
    if (span < 0)
      lo += span;
    else
      hi += span;
  };
  const int64_t eb = isa::dtypeBytes(ap.dtype);
  if (ap.space == isa::Space::Hbm) {
    extend(ap.partitionStep, ap.partitionCount);
    f.partBegin = 0;
    f.partEnd = 1;
  } else {
    f.partBegin = ap.partitionStart;
    f.partEnd = ap.partitionStart + ap.partitionCount;
  }
  for (const isa::Dim& d : ap.dims) extend(d.step, d.num);
  if (ap.space == isa::Space::Hbm) {
    f.byteBegin = (ap.offset + lo) * eb;
    f.byteEnd = (ap.offset + hi + 1) * eb;
  } else {
    f.byteBegin = ap.offset + lo * eb;
    f.byteEnd = ap.offset + hi * eb + eb;
  }
  return f;
}

bool boxesOverlap(const Footprint& a, const Footprint& b) {
  if (a.space != b.space) return false;
  if (a.space == isa::Space::Hbm && a.tensor != b.tensor) return false;
  return a.partBegin < b.partEnd && b.partBegin < a.partEnd && a.byteBegin < b.byteEnd &&
         b.byteBegin < a.byteEnd;
}

/// Calls fn(begin, end) with the byte spans `dims` covers from `base`: one per innermost run
/// when the innermost dim is contiguous, else one per element.
template <typename Fn>
void forEachSpan(std::vector<isa::Dim> dims, int64_t base, int64_t elementBytes, Fn&& fn) {
  int64_t runBytes = elementBytes;
  if (!dims.empty() && dims.back().step == 1) {
    runBytes = std::max<int64_t>(dims.back().num, 0) * elementBytes;
    dims.pop_back();
  }
  if (runBytes == 0) return;
  forEachElement(
      dims, [&](int64_t e) { fn(base + e * elementBytes, base + e * elementBytes + runBytes); });
}

bool operandsOverlap(const isa::AccessPattern& a, const isa::AccessPattern& b) {
  const std::vector<isa::Dim> da = flatDims(a), db = flatDims(b);
  if (countOf(da) > kExactLimit || countOf(db) > kExactLimit) return true;
  // Byte addresses: HBM offsets count elements, on-chip offsets count bytes.
  const int64_t ea = isa::dtypeBytes(a.dtype), eb = isa::dtypeBytes(b.dtype);
  const int64_t baseA = a.space == isa::Space::Hbm ? a.offset * ea : a.offset;
  const int64_t baseB = b.space == isa::Space::Hbm ? b.offset * eb : b.offset;
  std::vector<std::pair<int64_t, int64_t>> spans;
  forEachSpan(da, baseA, ea, [&](int64_t lo, int64_t hi) { spans.emplace_back(lo, hi); });
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, s.second);
    else
      merged.push_back(s);
  }
  bool hit = false;
  forEachSpan(db, baseB, eb, [&](int64_t lo, int64_t hi) {
    if (hit) return;
    auto it = std::upper_bound(merged.begin(), merged.end(), std::make_pair(lo, INT64_MAX));
    if (it != merged.begin() && std::prev(it)->second > lo) hit = true;
    if (it != merged.end() && it->first < hi) hit = true;
  });
  return hit;
}

}  // namespace neuronsim::sim
