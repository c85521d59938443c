#pragma once
// Simulated time as an integer count of picoseconds (gem5's Tick): exact sums and comparisons,
// nanoseconds only when a value is shown.

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace neuronsim::traces {

/// A point in simulated time or a duration, in whole picoseconds.
class Tick {
 public:
  constexpr Tick() = default;
  static constexpr Tick fromPs(int64_t ps) { return Tick(ps); }
  /// `ns` rounded to the nearest picosecond (for times read from text or computed in ns).
  static Tick fromNs(double ns) { return Tick(std::llround(ns * 1000.0)); }
  /// Later than any time a run can reach (the simulated-time limit is far below it).
  static constexpr Tick never() { return Tick(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  /// Nanoseconds, for output: exact to the picosecond (three decimals).
  constexpr double ns() const { return static_cast<double>(ps_) / 1000.0; }

  friend constexpr Tick operator+(Tick a, Tick b) { return Tick(a.ps_ + b.ps_); }
  friend constexpr Tick operator-(Tick a, Tick b) { return Tick(a.ps_ - b.ps_); }
  constexpr Tick& operator+=(Tick d) {
    ps_ += d.ps_;
    return *this;
  }
  friend constexpr auto operator<=>(Tick a, Tick b) = default;

 private:
  constexpr explicit Tick(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

}  // namespace neuronsim::traces
