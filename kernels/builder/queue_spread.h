#pragma once
// DMAs spread over issuing engines in turn, each engine with its own DMA queues.

#include <utility>
#include <vector>

#include "isa/instruction.h"
#include "kernels/builder/kernel_builder.h"
#include "kernels/builder/pipeline.h"

namespace neuronsim::kernels {

/// Hands out DmaOptions that take the issuing engines in turn, each engine cycling over its
/// own queues. Two consecutive DMAs (say the two partition halves of a store) are then
/// triggered from different engines and start their latency together, where two triggers on
/// one engine would start the second a trigger later.
class DmaSpread {
 public:
  /// One issuing engine and its queues (a queue -1: the builder's round robin).
  struct Lane {
    isa::Engine issue;
    QueueCycle queues;
  };
  explicit DmaSpread(std::vector<Lane> lanes) : lanes_(std::move(lanes)) {}
  /// The next lane's engine with that lane's next queue.
  DmaOptions next();

 private:
  std::vector<Lane> lanes_;
  size_t next_ = 0;
};

}  // namespace neuronsim::kernels
