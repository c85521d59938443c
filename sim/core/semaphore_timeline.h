#pragma once
// A semaphore as a timeline of timestamped increments: an increment is registered when its
// instruction issues (with the time it becomes visible), so an engine ahead of the SystemC
// clock can tell whether its wait already holds at its own local time.

#include <cstdint>
#include <vector>

#include "traces/tick.h"

namespace neuronsim::sim {

using traces::Tick;

class SemaphoreTimeline {
 public:
  /// When the value first reached a target, and which instruction's increment did it.
  /// `at` is Tick::never() when not reached (yet); Tick() (0) when reached by increments
  /// folded into the settled past.
  struct Reach {
    Tick at = Tick::never();
    int64_t by = -1;
  };

  /// Registers `delta` visible at `at` from instruction `by`. `floor` is a time no query will
  /// look before (every querier's own time is at or after it): increments up to it may be
  /// folded into the base.
  void add(Tick at, int64_t delta, int64_t by, Tick floor) {
    if (delta <= 0) monotone_ = false;
    if (head_ == increments_.size() || increments_.back().at <= at)  // in time order: common
      increments_.push_back({at, final_ + delta, by});
    else
      insert(at, delta, by);
    final_ += delta;
    if (monotone_ && head_ < increments_.size() && increments_[head_].at <= floor) fold(floor);
  }
  /// First time (over registered increments) the value is >= `value`.
  Reach firstReach(int64_t value) const {
    if (!monotone_) return searchReach(value, head_);
    if (base_ >= value) return {Tick(), -1};
    if (final_ < value) return {};
    // Some live increment reaches `value`. Each adds at least 1, so none before `from` does:
    // with unit increments (the common case) `from` is the answer.
    const auto behind = static_cast<size_t>(final_ - value);
    const size_t newest = increments_.size() - 1;
    const size_t from = behind >= newest - head_ ? head_ : newest - behind;
    if (increments_[from].cumulative >= value) return {increments_[from].at, increments_[from].by};
    return searchReach(value, from + 1);
  }
  /// Value after every registered increment.
  int64_t finalValue() const { return final_; }

 private:
  /// One registered increment.
  struct Increment {
    Tick at;
    int64_t cumulative;  ///< base + deltas up to and including this one
    int64_t by;
  };
  /// Registers an increment earlier than the newest one.
  void insert(Tick at, int64_t delta, int64_t by);
  /// Folds the increments visible by `floor` into the base (monotone timelines only).
  void fold(Tick floor);
  /// firstReach() over the live increments from position `from` on, none before it reaching
  /// `value` (a monotone timeline's value is reached, and not before `from`).
  Reach searchReach(int64_t value, size_t from) const;

  int64_t base_ = 0;                   ///< value after the folded increments
  int64_t final_ = 0;                  ///< value after every increment
  std::vector<Increment> increments_;  ///< sorted by time (stable); [head_, end) are live
  size_t head_ = 0;
  bool monotone_ = true;
};

}  // namespace neuronsim::sim
