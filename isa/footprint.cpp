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

ElementSpan dimsSpan(std::span<const Dim> dims) {
  WideSpan s;
  for (const Dim& d : dims) s.add(d.step, d.num);
  return {saturate(s.lo), saturate(s.hi)};
}

ElementSpan elementSpan(const AccessPattern& ap) {
  const WideSpan s = wideSpan(ap);
  return {saturate(s.lo), saturate(s.hi)};
}

Footprint footprintOf(const AccessPattern& ap) {
  const WideSpan s = wideSpan(ap);
  const __int128 bytes = dtypeBytes(ap.dtype);
  Footprint f;
  f.space = ap.space;
  if (ap.space == Space::Hbm) {
    f.tensor = ap.tensor;
    f.byteBegin = saturate((ap.offset + s.lo) * bytes);
    f.byteEnd = saturate((ap.offset + s.hi + 1) * bytes);
  } else {
    f.partBegin = ap.partitionStart;
    f.partEnd = ap.partitionStart + ap.partitionCount;
    f.byteBegin = saturate(ap.offset + s.lo * bytes);
    f.byteEnd = saturate(ap.offset + (s.hi + 1) * bytes);
  }
  return f;
}

bool boxesOverlap(const Footprint& a, const Footprint& b) {
  if (a.space != b.space) return false;
  if (a.space == Space::Hbm && a.tensor != b.tensor) return false;
  return a.partBegin < b.partEnd && b.partBegin < a.partEnd && a.byteBegin < b.byteEnd &&
         b.byteBegin < a.byteEnd;
}

}  // namespace neuronsim::isa
