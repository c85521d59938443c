#pragma once
// A semaphore as a timeline of timestamped increments: an increment is registered when its
// instruction issues (with the time it lands), so an engine ahead of the SystemC clock can
// tell whether its wait already holds at its own local time.

#include <cstdint>
#include <limits>
#include <vector>

namespace neuronsim::sim {

class SemaphoreTimeline {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  /// When the value first reached `value`, and which instruction's increment did it.
  struct Reach {
    double ns = kNever;
    int64_t by = -1;
  };

  /// Registers `delta` landing at `ns` from instruction `by`. `floorNs` is a time no query
  /// will look before (the SystemC now): older increments may be folded into the base.
  void add(double ns, int64_t delta, int64_t by, double floorNs);
  /// First time (over registered increments) the value is >= `value`; kNever if not yet.
  Reach firstReach(int64_t value) const;
  /// Value after every registered increment.
  int64_t finalValue() const;

 private:
  /// One registered increment.
  struct Increment {
    double ns;
    int64_t cumulative;  ///< base + deltas up to and including this one
    int64_t by;
  };
  int64_t base_ = 0;
  std::vector<Increment> increments_;  ///< sorted by ns (stable)
  bool monotone_ = true;
};

}  // namespace neuronsim::sim
