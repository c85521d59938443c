// DmaSpread: issuing engines in turn, queues in turn within each engine.

#include "kernels/builder/queue_spread.h"

#include "isa/error.h"

namespace neuronsim::kernels {

DmaOptions DmaSpread::next() {
  if (lanes_.empty()) throw Error("DmaSpread: no issuing engine to spread over");
  Lane& lane = lanes_[next_++ % lanes_.size()];
  return {lane.queues.next(), lane.issue};
}

}  // namespace neuronsim::kernels
