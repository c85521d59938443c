// Per-axis window arithmetic shared by the pooling kernels and their tiling plans.

#include "kernels/pooling/pooling_axis.h"

#include <algorithm>

namespace neuronsim::kernels {

Range PoolAxis::outputsTouching(Range in) const {
  if (in.empty()) return {0, 0};
  const int64_t lo = std::max<int64_t>(0, ceilDiv(in.lo + p - k + 1, s));
  const int64_t hi = std::min(outputs(), floorDiv(in.hi - 1 + p, s) + 1);
  return {lo, std::max(lo, hi)};
}

Range PoolAxis::inputsOf(Range out) const {
  if (out.empty()) return {0, 0};
  const int64_t lo = std::max<int64_t>(0, out.lo * s - p);
  const int64_t hi = std::min(n, (out.hi - 1) * s - p + k);
  return {lo, std::max(lo, hi)};
}

Range PoolAxis::tapOutputs(int64_t t, Range in, Range out) const {
  const int64_t lo = std::max(out.lo, ceilDiv(in.lo - t + p, s));
  const int64_t hi = std::min(out.hi, floorDiv(in.hi - 1 - t + p, s) + 1);
  return {lo, std::max(lo, hi)};
}

}  // namespace neuronsim::kernels
