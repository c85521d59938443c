// Exact byte overlap of access patterns.
#include "sim/race/footprint.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "isa/footprint.h"

namespace neuronsim::sim {
namespace {

constexpr int64_t kExactLimit = int64_t{1} << 22;

/// Dims that visit each distinct element of `ap` once in the usual cases, and the base offset
/// (in elements) they start from: HBM's partition axis becomes an outer dim, dims of one
/// element and step-0 dims (which revisit the same elements) are dropped, negative steps are
/// walked the other way, and a dim that continues its inner neighbour is merged into it. So
/// the walk's length follows the distinct elements touched, not the element count.
std::vector<isa::Dim> distinctDims(const isa::AccessPattern& ap, int64_t& base) {
  std::vector<isa::Dim> dims;
  base = 0;
  auto take = [&](int64_t step, int64_t num) {
    if (num <= 1 || step == 0) return;
    if (step < 0) {
      base += step * (num - 1);
      step = -step;
    }
    dims.push_back({step, num});
  };
  if (ap.space == isa::Space::Hbm) take(ap.partitionStep, ap.partitionCount);
  for (const isa::Dim& d : ap.dims) take(d.step, d.num);
  std::stable_sort(dims.begin(), dims.end(),
                   [](const isa::Dim& a, const isa::Dim& b) { return a.step > b.step; });
  std::vector<isa::Dim> merged;
  for (const isa::Dim& d : dims) {
    if (!merged.empty() && merged.back().step == d.step * d.num) {
      merged.back() = {d.step, merged.back().num * d.num};
    } else {
      merged.push_back(d);
    }
  }
  return merged;
}

int64_t countOf(const std::vector<isa::Dim>& dims) {
  int64_t n = 1;
  for (const isa::Dim& d : dims) n *= std::max<int64_t>(d.num, 0);
  return n;
}

/// Calls fn(begin, end) with the byte spans `dims` covers from `base`: one per innermost run
/// when the innermost dim is contiguous, else one per element (isa::forEachOffset walks them).
template <typename Fn>
void forEachSpan(std::vector<isa::Dim> dims, int64_t base, int64_t elementBytes, Fn&& fn) {
  int64_t runBytes = elementBytes;
  if (!dims.empty() && dims.back().step == 1) {
    runBytes = std::max<int64_t>(dims.back().num, 0) * elementBytes;
    dims.pop_back();
  }
  if (runBytes == 0) return;
  isa::forEachOffset(
      dims, [&](int64_t e) { fn(base + e * elementBytes, base + e * elementBytes + runBytes); });
}

}  // namespace

bool operandsOverlap(const isa::AccessPattern& a, const isa::AccessPattern& b) {
  int64_t shiftA = 0, shiftB = 0;
  const std::vector<isa::Dim> da = distinctDims(a, shiftA), db = distinctDims(b, shiftB);
  if (countOf(da) > kExactLimit || countOf(db) > kExactLimit) return true;
  // Byte addresses: HBM offsets count elements, on-chip offsets count bytes.
  const int64_t ea = isa::dtypeBytes(a.dtype), eb = isa::dtypeBytes(b.dtype);
  const int64_t baseA = (a.space == isa::Space::Hbm ? a.offset * ea : a.offset) + shiftA * ea;
  const int64_t baseB = (b.space == isa::Space::Hbm ? b.offset * eb : b.offset) + shiftB * eb;
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
    hit = (it != merged.begin() && std::prev(it)->second > lo) ||
          (it != merged.end() && it->first < hi);
  });
  return hit;
}

}  // namespace neuronsim::sim
