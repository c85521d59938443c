#pragma once
// Rounding a double to the nearest integer, halves away from zero, without the libm call.

#include <cmath>
#include <cstdint>

namespace neuronsim::sim {

/// std::llround(x), inline below 2^62 in magnitude: below 2^53 the truncation and the fraction
/// it leaves are exact, and from there on x is an integer.
inline int64_t roundHalfAway(double x) {
  if (!(x > -0x1p62 && x < 0x1p62)) return std::llround(x);
  const auto whole = static_cast<int64_t>(x);
  const double fraction = x - static_cast<double>(whole);
  return fraction >= 0.5 ? whole + 1 : fraction <= -0.5 ? whole - 1 : whole;
}

}  // namespace neuronsim::sim
