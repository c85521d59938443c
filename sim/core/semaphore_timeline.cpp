// Timestamped semaphore increments, with folding of the settled past.
#include "sim/core/semaphore_timeline.h"

#include <algorithm>

namespace neuronsim::sim {

void SemaphoreTimeline::add(double ns, int64_t delta, int64_t by, double floorNs) {
  if (delta <= 0) monotone_ = false;
  auto pos = std::upper_bound(increments_.begin(), increments_.end(), ns,
                              [](double t, const Increment& inc) { return t < inc.ns; });
  const int64_t before = pos == increments_.begin() ? base_ : std::prev(pos)->cumulative;
  pos = increments_.insert(pos, Increment{ns, before + delta, by});
  for (auto it = std::next(pos); it != increments_.end(); ++it) it->cumulative += delta;
  // Fold the settled past (every querier is at or after floorNs).
  if (increments_.size() >= 4096) {
    auto settled = std::upper_bound(increments_.begin(), increments_.end(), floorNs,
                                    [](double t, const Increment& inc) { return t < inc.ns; });
    if (settled - increments_.begin() >= static_cast<std::ptrdiff_t>(increments_.size() / 2)) {
      base_ = std::prev(settled)->cumulative;
      increments_.erase(increments_.begin(), settled);
    }
  }
}

SemaphoreTimeline::Reach SemaphoreTimeline::firstReach(int64_t value) const {
  if (base_ >= value && (monotone_ || increments_.empty())) return {-kNever, -1};
  if (monotone_) {
    auto it = std::lower_bound(increments_.begin(), increments_.end(), value,
                               [](const Increment& inc, int64_t v) { return inc.cumulative < v; });
    if (it == increments_.end()) return {};
    return {it->ns, it->by};
  }
  if (base_ >= value) return {-kNever, -1};
  for (const Increment& inc : increments_)
    if (inc.cumulative >= value) return {inc.ns, inc.by};
  return {};
}

int64_t SemaphoreTimeline::finalValue() const {
  return increments_.empty() ? base_ : increments_.back().cumulative;
}

}  // namespace neuronsim::sim
