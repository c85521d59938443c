// The TensorE throttle ramp and its re-engagement rule.
#include "sim/cost/pe_throttle.h"

#include <algorithm>
#include <cmath>

#include "sim/core/rounding.h"

namespace neuronsim::sim {

PeThrottle::PeThrottle(const MachineConfig& machine)
    : enabled_(machine.peThrottle),
      startFraction_(machine.throttleStartFraction),
      ramp_(Tick::fromNs(machine.throttleRampNs)),
      window_(Tick::fromNs(machine.throttleWindowNs)),
      utilization_(machine.throttleUtilization),
      slope_((1.0 - startFraction_) / static_cast<double>(ramp_.ps())) {}

void PeThrottle::beginAt(Tick start) {
  if (!enabled_) return;
  while (!busy_.empty() && busy_.front().second <= start - window_) busy_.pop_front();
  if (rampStart_ < Tick()) {
    rampStart_ = start;
    return;
  }
  const Tick from = start - window_;
  if (from >= rampStart_ && static_cast<double>(busyIn(from, start).ps()) <
                                utilization_ * static_cast<double>(window_.ps()))
    rampStart_ = start;
}

double PeThrottle::rampRateAt(Tick t) const {
  if (t < rampStart_) return startFraction_;
  return startFraction_ + (1.0 - startFraction_) * static_cast<double>((t - rampStart_).ps()) /
                              static_cast<double>(ramp_.ps());
}

Tick PeThrottle::endInRamp(Tick start, Tick work, double rate) const {
  const Tick rampEnd = rampStart_ + ramp_;
  // Work done from `start` over x ps: a x + b x^2 / 2, the rate rising linearly at b per ps.
  const double a = rate;
  const double b = slope_;
  const double span = static_cast<double>((rampEnd - start).ps());
  const double rampWork = a * span + 0.5 * b * span * span;
  const double w = static_cast<double>(work.ps());
  if (w > rampWork) return rampEnd + Tick::fromPs(roundHalfAway(w - rampWork));
  return start + Tick::fromPs(roundHalfAway((-a + std::sqrt(a * a + 2.0 * b * w)) / b));
}

void PeThrottle::recordBusy(Tick start, Tick end) {
  if (enabled_ && end > start) busy_.emplace_back(start, end);
}

Tick PeThrottle::busyIn(Tick from, Tick to) const {
  Tick total;
  for (const auto& [s, e] : busy_) {
    const Tick overlap = std::min(e, to) - std::max(s, from);
    if (overlap > Tick()) total += overlap;
  }
  return total;
}

}  // namespace neuronsim::sim
