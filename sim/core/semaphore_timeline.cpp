// Timestamped semaphore increments, with folding of the settled past.
#include "sim/core/semaphore_timeline.h"

#include <algorithm>

namespace neuronsim::sim {

void SemaphoreTimeline::add(Tick at, int64_t delta, int64_t by, Tick floor) {
  if (delta <= 0) monotone_ = false;
  if (head_ == increments_.size() || increments_.back().at <= at) {  // in time order: common
    increments_.push_back({at, finalValue() + delta, by});
  } else {
    const auto live = increments_.begin() + static_cast<std::ptrdiff_t>(head_);
    auto pos = std::upper_bound(live, increments_.end(), at,
                                [](Tick t, const Increment& inc) { return t < inc.at; });
    const int64_t before = pos == live ? base_ : std::prev(pos)->cumulative;
    pos = increments_.insert(pos, Increment{at, before + delta, by});
    for (auto it = std::next(pos); it != increments_.end(); ++it) it->cumulative += delta;
  }
  fold(floor);
}

void SemaphoreTimeline::fold(Tick floor) {
  // A non-monotone timeline keeps every increment: a value may be reached, lost and reached.
  if (!monotone_) return;
  while (head_ < increments_.size() && increments_[head_].at <= floor)
    base_ = increments_[head_++].cumulative;
  if (head_ >= 64 && head_ * 2 >= increments_.size()) {
    increments_.erase(increments_.begin(),
                      increments_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

SemaphoreTimeline::Reach SemaphoreTimeline::firstReach(int64_t value) const {
  const auto live = increments_.begin() + static_cast<std::ptrdiff_t>(head_);
  if (monotone_) {
    if (base_ >= value) return {Tick(), -1};
    if (finalValue() < value) return {};
    // Waiters mostly ask for a value reached lately: gallop back from the newest increment
    // (which reaches `value`), then binary-search the last gap.
    size_t reached = increments_.size() - 1, lo = head_;
    for (size_t step = 1; reached - head_ >= step; step *= 2) {
      if (increments_[reached - step].cumulative < value) {
        lo = reached - step + 1;
        break;
      }
      reached -= step;
    }
    const auto it =
        std::lower_bound(increments_.begin() + static_cast<std::ptrdiff_t>(lo),
                         increments_.begin() + static_cast<std::ptrdiff_t>(reached), value,
                         [](const Increment& inc, int64_t v) { return inc.cumulative < v; });
    return {it->at, it->by};
  }
  if (base_ >= value && head_ == increments_.size()) return {Tick(), -1};
  for (auto it = live; it != increments_.end(); ++it)
    if (it->cumulative >= value) return {it->at, it->by};
  return {};
}

}  // namespace neuronsim::sim
