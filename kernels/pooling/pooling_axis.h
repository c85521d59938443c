#pragma once
// Index arithmetic of one pooling axis: which outputs touch an input range and where a tap lands.

#include <cstdint>

#include "isa/size_limits.h"

namespace neuronsim::kernels {

/// Half-open index range [lo, hi).
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool empty() const { return hi <= lo; }
  bool operator==(const Range&) const = default;
};

/// One axis of a pooling window: input extent n, window k, stride s, padding p. Output o
/// reads inputs o*s + t - p for taps t in [0, k).
struct PoolAxis {
  int64_t n = 1;
  int64_t k = 1;
  int64_t s = 1;
  int64_t p = 0;

  /// Number of outputs: floor((n + 2p - k) / s) + 1.
  int64_t outputs() const { return (n + 2 * p - k) / s + 1; }
  /// Outputs whose window holds at least one input of `in` (a subrange of [0, n)).
  Range outputsTouching(Range in) const;
  /// In-bounds inputs read by the outputs `out`.
  Range inputsOf(Range out) const;
  /// Outputs o in `out` whose tap t lands on an input inside `in`.
  Range tapOutputs(int64_t t, Range in, Range out) const;
  /// The input that tap t of output o reads (may be padding: < 0 or >= n).
  int64_t inputOf(int64_t o, int64_t t) const { return o * s + t - p; }
};

using isa::ceilDiv;
using isa::floorDiv;

}  // namespace neuronsim::kernels
