// The TensorE throttle ramp and its re-engagement rule.
#include "sim/cost/pe_throttle.h"

#include <algorithm>
#include <cmath>

namespace neuronsim::sim {

PeThrottle::PeThrottle(const MachineConfig& machine)
    : enabled_(machine.peThrottle),
      startFraction_(machine.throttleStartFraction),
      rampNs_(machine.throttleRampNs),
      windowNs_(machine.throttleWindowNs),
      utilization_(machine.throttleUtilization) {}

void PeThrottle::beginAt(double startNs) {
  if (!enabled_) return;
  while (!busy_.empty() && busy_.front().second <= startNs - windowNs_) busy_.pop_front();
  if (rampStart_ < 0) {
    rampStart_ = startNs;
    return;
  }
  const double from = startNs - windowNs_;
  if (from >= rampStart_ && busyIn(from, startNs) < utilization_ * windowNs_) rampStart_ = startNs;
}

double PeThrottle::rateAt(double ns) const {
  if (!enabled_ || rampStart_ < 0 || ns >= rampStart_ + rampNs_) return 1.0;
  if (ns < rampStart_) return startFraction_;
  return startFraction_ + (1.0 - startFraction_) * (ns - rampStart_) / rampNs_;
}

double PeThrottle::endFor(double startNs, double workNs) const {
  const double rampEnd = rampStart_ + rampNs_;
  if (!enabled_ || rampStart_ < 0 || startNs >= rampEnd || workNs <= 0) return startNs + workNs;
  const double a = rateAt(startNs);
  const double b = (1.0 - startFraction_) / rampNs_;
  const double span = rampEnd - startNs;
  const double rampWork = a * span + 0.5 * b * span * span;
  if (workNs > rampWork) return rampEnd + (workNs - rampWork);
  return startNs + (-a + std::sqrt(a * a + 2.0 * b * workNs)) / b;
}

void PeThrottle::recordBusy(double startNs, double endNs) {
  if (enabled_ && endNs > startNs) busy_.emplace_back(startNs, endNs);
}

double PeThrottle::busyIn(double fromNs, double toNs) const {
  double total = 0;
  for (const auto& [s, e] : busy_) total += std::max(0.0, std::min(e, toNs) - std::max(s, fromNs));
  return total;
}

}  // namespace neuronsim::sim
