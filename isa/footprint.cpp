// Element spans and byte bounding boxes of access patterns, computed in 128 bits and saturated.
#include "isa/footprint.h"

#include <limits>

namespace neuronsim::isa {
namespace {

int64_t saturate(__int128 v) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  return v > kMax ? kMax : v < kMin ? kMin : static_cast<int64_t>(v);
}

struct WideSpan {
  __int128 lo = 0, hi = 0;
  void add(int64_t step, int64_t num) {
    if (num <= 1) return;
    const __int128 reach = static_cast<__int128>(step) * (num - 1);
    (reach < 0 ? lo : hi) += reach;
  }
};

WideSpan wideSpan(const AccessPattern& ap) {
  WideSpan s;
  for (const Dim& d : ap.dims) s.add(d.step, d.num);
  if (ap.space == Space::Hbm) s.add(ap.partitionStep, ap.partitionCount);
  return s;
}

}  // namespace

std::vector<int64_t> visitOffsets(std::span<const Dim> dims) {
  int64_t count = 1;
  for (const Dim& d : dims) count *= d.num > 0 ? d.num : 0;
  std::vector<int64_t> out(static_cast<size_t>(count));
  size_t k = 0;
  forEachOffset(dims, [&](int64_t offset) { out[k++] = offset; });
  return out;
}

ElementSpan dimsSpan(std::span<const Dim> dims) {
  WideSpan s;
  for (const Dim& d : dims) s.add(d.step, d.num);
  return {saturate(s.lo), saturate(s.hi)};
}

ElementSpan elementSpan(const AccessPattern& ap) {
  const WideSpan s = wideSpan(ap);
  return {saturate(s.lo), saturate(s.hi)};
}

Footprint wideFootprint(const AccessPattern& ap) {
  Footprint f;
  f.space = ap.space;
  if (ap.space == Space::Hbm) {
    f.tensor = ap.tensor;
  } else {
    f.partBegin = ap.partitionStart;
    f.partEnd = ap.partitionStart + ap.partitionCount;
  }
  const WideSpan s = wideSpan(ap);
  const __int128 bytes = dtypeBytes(ap.dtype);
  if (ap.space == Space::Hbm) {
    f.byteBegin = saturate((ap.offset + s.lo) * bytes);
    f.byteEnd = saturate((ap.offset + s.hi + 1) * bytes);
  } else {
    f.byteBegin = saturate(ap.offset + s.lo * bytes);
    f.byteEnd = saturate(ap.offset + (s.hi + 1) * bytes);
  }
  return f;
}

}  // namespace neuronsim::isa
