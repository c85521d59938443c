#pragma once
// The Trn2 TensorE dI/dt throttle (R2): a linear ramp from a start fraction to full rate,
// re-engaged when PE utilization over a trailing window falls below a threshold.

#include <deque>
#include <utility>

#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Plain model, driven by the TensorE module in start-time order.
class PeThrottle {
 public:
  explicit PeThrottle(const MachineConfig& machine);

  /// Call at each PE instruction start (nondecreasing ns): engages the ramp at the first
  /// instruction, and again when busy time over the trailing window (lying wholly after
  /// the last engagement) is below the utilization threshold.
  void beginAt(double startNs);
  /// PE rate at `ns` as a fraction of full speed (1 when disabled or ramped up).
  double rateAt(double ns) const;
  /// When an instruction needing `workNs` at full rate, starting at `startNs`, ends.
  double endFor(double startNs, double workNs) const;
  /// Records that the PE was busy over [startNs, endNs).
  void recordBusy(double startNs, double endNs);
  /// Start of the current ramp (negative before the first instruction).
  double rampStartNs() const { return rampStart_; }

 private:
  double busyIn(double fromNs, double toNs) const;

  bool enabled_;
  double startFraction_;
  double rampNs_;
  double windowNs_;
  double utilization_;
  double rampStart_ = -1;
  std::deque<std::pair<double, double>> busy_;
};

}  // namespace neuronsim::sim
