// Timestamped semaphore increments, with folding of the settled past.
#include "sim/core/semaphore_timeline.h"

#include <algorithm>

namespace neuronsim::sim {

void SemaphoreTimeline::insert(Tick at, int64_t delta, int64_t by) {
  const auto live = increments_.begin() + static_cast<std::ptrdiff_t>(head_);
  auto pos = std::upper_bound(live, increments_.end(), at,
                              [](Tick t, const Increment& inc) { return t < inc.at; });
  const int64_t before = pos == live ? base_ : std::prev(pos)->cumulative;
  pos = increments_.insert(pos, Increment{at, before + delta, by});
  for (auto it = std::next(pos); it != increments_.end(); ++it) it->cumulative += delta;
}

void SemaphoreTimeline::fold(Tick floor) {
  // A non-monotone timeline keeps every increment (add() does not fold it): a value may be
  // reached, lost and reached.
  while (head_ < increments_.size() && increments_[head_].at <= floor)
    base_ = increments_[head_++].cumulative;
  if (head_ >= 64 && head_ * 2 >= increments_.size()) {
    increments_.erase(increments_.begin(),
                      increments_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

SemaphoreTimeline::Reach SemaphoreTimeline::searchReach(int64_t value, size_t from) const {
  const auto begin = increments_.begin() + static_cast<std::ptrdiff_t>(from);
  if (monotone_) {  // cumulative values rise, and one from `from` on reaches `value`
    const auto it =
        std::lower_bound(begin, increments_.end(), value,
                         [](const Increment& inc, int64_t v) { return inc.cumulative < v; });
    return {it->at, it->by};
  }
  if (base_ >= value && head_ == increments_.size()) return {Tick(), -1};
  for (auto it = begin; it != increments_.end(); ++it)
    if (it->cumulative >= value) return {it->at, it->by};
  return {};
}

}  // namespace neuronsim::sim
