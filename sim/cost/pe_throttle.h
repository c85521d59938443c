#pragma once
// The Trn2 TensorE dI/dt throttle (R2): a linear ramp from a start fraction to full rate,
// re-engaged when PE utilization over a trailing window falls below a threshold.

#include <deque>
#include <utility>

#include "sim/machine_config.h"
#include "traces/tick.h"

namespace neuronsim::sim {

using traces::Tick;

/// Plain model, driven by TensorTiming in start-time order.
class PeThrottle {
 public:
  explicit PeThrottle(const MachineConfig& machine);

  bool enabled() const { return enabled_; }
  /// Call when a PE instruction is ready to start (nondecreasing): engages the ramp at the first
  /// instruction, and again when PE work over the trailing window (lying wholly after the
  /// last engagement) is below the utilization threshold.
  void beginAt(Tick start);
  /// PE rate at `t` as a fraction of full speed (1 when disabled or ramped up).
  double rateAt(Tick t) const { return fullRateAt(t) ? 1.0 : rampRateAt(t); }
  /// When an instruction needing `work` at full rate, ready at `start`, ends (rounded to the
  /// nearest ps; `start + work` at full rate).
  Tick endFor(Tick start, Tick work) const { return run(start, work).end; }
  /// rateAt(start) and endFor(start, work) in one.
  struct Run {
    Tick end;
    double rate = 1.0;
  };
  Run run(Tick start, Tick work) const {
    if (fullRateAt(start)) return {start + work, 1.0};
    const double rate = rampRateAt(start);
    return {work <= Tick() ? start + work : endInRamp(start, work, rate), rate};
  }
  /// Records that the PE did work over [start, end) (at full rate: utilization counts work).
  void recordBusy(Tick start, Tick end);
  /// Start of the current ramp (negative before the first instruction).
  Tick rampStart() const { return rampStart_; }

 private:
  /// True when the PE runs at full rate from `t` on (disabled, not engaged, or ramped up).
  bool fullRateAt(Tick t) const {
    return !enabled_ || rampStart_ < Tick() || t >= rampStart_ + ramp_;
  }
  /// rateAt() and endFor() while the ramp is engaged at `t` / `start`.
  double rampRateAt(Tick t) const;
  /// endFor() in the ramp, the rate at `start` being `rate`.
  Tick endInRamp(Tick start, Tick work, double rate) const;
  Tick busyIn(Tick from, Tick to) const;

  bool enabled_;
  double startFraction_;
  Tick ramp_;
  Tick window_;
  double utilization_;
  double slope_;  ///< rate gained per ps of the ramp
  Tick rampStart_ = Tick::fromPs(-1);
  std::deque<std::pair<Tick, Tick>> busy_;
};

}  // namespace neuronsim::sim
