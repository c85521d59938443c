#pragma once
// Software-pipelining helpers shared by library kernels: buffer-set rotation and DMA queue
// spreading.

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace neuronsim::kernels {

/// Round robin over a fixed list of DMA queues (ids 0..15).
class QueueCycle {
 public:
  explicit QueueCycle(std::vector<int32_t> queues) : queues_(std::move(queues)) {}
  /// `count` consecutive queues starting at `first`.
  static QueueCycle span(int32_t first, int32_t count);
  int32_t next() { return queues_[next_++ % queues_.size()]; }
  std::function<int32_t()> taker() {
    return [this] { return next(); };
  }

 private:
  std::vector<int32_t> queues_;
  size_t next_ = 0;
};

/// Runs `count` work items over `sets` rotating buffer sets: the loads of item i + sets - 1
/// are emitted before compute(i), so up to sets - 1 items' loads overlap item i's compute
/// (the builder's semaphores make a set's loads wait until its previous item is done).
/// set = item % sets.
void runPipelined(int64_t count, int sets, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& compute);

}  // namespace neuronsim::kernels
