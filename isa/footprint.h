#pragma once
// How far an access pattern reaches: element spans of its dims and its bounding box in memory.

#include <cstdint>
#include <span>
#include <vector>

#include "isa/access_pattern.h"

namespace neuronsim::isa {

/// Lowest and highest element offset (inclusive) some dims reach from their base, saturated
/// at the int64 limits (a pattern that reaches them is out of range anyway).
struct ElementSpan {
  int64_t lo = 0;
  int64_t hi = 0;
};
ElementSpan dimsSpan(std::span<const Dim> dims);
/// The span of all element offsets `ap` reaches relative to `offset`: its free dims, plus the
/// partition axis for HBM (whose rows are partitionStep elements apart).
ElementSpan elementSpan(const AccessPattern& ap);

/// Calls fn(offset) with the element offset of every position `dims` visit, in visiting order
/// (row-major: the last dim fastest), relative to the pattern's base. Dims with num <= 0 visit
/// nothing. The one walk of an access pattern's positions.
template <typename Fn>
void forEachOffset(std::span<const Dim> dims, Fn&& fn) {
  int64_t count = 1;
  for (const Dim& d : dims) count *= d.num > 0 ? d.num : 0;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t cur = 0;
  for (int64_t k = 0; k < count; ++k) {
    fn(cur);
    for (size_t j = dims.size(); j-- > 0;) {
      if (++index[j] < dims[j].num) {
        cur += dims[j].step;
        break;
      }
      cur -= dims[j].step * (dims[j].num - 1);
      index[j] = 0;
    }
  }
}

/// forEachOffset's offsets as a vector.
std::vector<int64_t> visitOffsets(std::span<const Dim> dims);

/// Bounding box of one operand. On chip: partitions [partBegin, partEnd) and bytes
/// [byteBegin, byteEnd) inside each partition. HBM: tensor `tensor`, one row
/// (partBegin 0, partEnd 1), bytes of the flattened tensor. Byte bounds saturate like
/// ElementSpan.
struct Footprint {
  Space space = Space::Sbuf;
  int32_t tensor = -1;  ///< HBM only (-1 on chip)
  int32_t partBegin = 0;
  int32_t partEnd = 1;
  int64_t byteBegin = 0;
  int64_t byteEnd = 0;
};
/// footprintOf's 128-bit path, for patterns whose reach could overflow 64 bits.
Footprint wideFootprint(const AccessPattern& ap);
/// The 64-bit element reach of some dims from their base, summed one dim at a time, with
/// whether some step overflowed (then wideFootprint decides).
struct Reach {
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  void add(int64_t step, int64_t num) {
    if (num <= 1) return;
    int64_t reach = 0;
    overflow |= __builtin_mul_overflow(step, num - 1, &reach);
    if (reach < 0)
      overflow |= __builtin_add_overflow(lo, reach, &lo);
    else
      overflow |= __builtin_add_overflow(hi, reach, &hi);
  }
};
/// footprintOf, given the reach of `ap`'s free dims (for callers that walk them anyway).
inline Footprint footprintFromReach(const AccessPattern& ap, Reach r) {
  const int64_t bytes = dtypeBytes(ap.dtype);
  Footprint f;
  f.space = ap.space;
  int64_t begin = 0, end = 0;
  bool overflow = r.overflow;
  if (ap.space == Space::Hbm) {
    r.add(ap.partitionStep, ap.partitionCount);
    overflow = r.overflow;
    f.tensor = ap.tensor;
    overflow |= __builtin_add_overflow(ap.offset, r.lo, &begin);
    overflow |= __builtin_mul_overflow(begin, bytes, &begin);
    overflow |= __builtin_add_overflow(ap.offset, r.hi, &end);
    overflow |= __builtin_add_overflow(end, 1, &end);
    overflow |= __builtin_mul_overflow(end, bytes, &end);
  } else {
    f.partBegin = ap.partitionStart;
    f.partEnd = ap.partitionStart + ap.partitionCount;
    overflow |= __builtin_mul_overflow(r.lo, bytes, &begin);
    overflow |= __builtin_add_overflow(ap.offset, begin, &begin);
    overflow |= __builtin_add_overflow(r.hi, 1, &end);
    overflow |= __builtin_mul_overflow(end, bytes, &end);
    overflow |= __builtin_add_overflow(ap.offset, end, &end);
  }
  if (overflow) [[unlikely]]
    return wideFootprint(ap);
  f.byteBegin = begin;
  f.byteEnd = end;
  return f;
}
/// Inline: the simulator asks it for every operand it issues. This is the 64-bit path;
/// wideFootprint decides when some step could overflow.
inline Footprint footprintOf(const AccessPattern& ap) {
  Reach r;
  for (const Dim& d : ap.dims) r.add(d.step, d.num);
  return footprintFromReach(ap, r);
}
/// True when the boxes share a space, tensor, partition and byte (inline: the interlock asks
/// it for every read of every issue).
inline bool boxesOverlap(const Footprint& a, const Footprint& b) {
  if (a.space != b.space) return false;
  if (a.space == Space::Hbm && a.tensor != b.tensor) return false;
  return a.partBegin < b.partEnd && b.partBegin < a.partEnd && a.byteBegin < b.byteEnd &&
         b.byteBegin < a.byteEnd;
}

}  // namespace neuronsim::isa
