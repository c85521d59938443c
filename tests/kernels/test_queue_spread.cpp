// DmaSpread: issuing engines in turn, each cycling over its own DMA queues.

#include <doctest/doctest.h>

#include <vector>

#include "isa/error.h"
#include "kernels/builder/queue_spread.h"

using neuronsim::isa::Engine;
using namespace neuronsim::kernels;

TEST_CASE("queue spread: engines take turns, each over its own queues") {
  DmaSpread spread(
      {{Engine::GpSimd, QueueCycle::span(8, 2)}, {Engine::Sync, QueueCycle({4, 6, 7})}});
  const std::vector<std::pair<int32_t, Engine>> expected = {
      {8, Engine::GpSimd}, {4, Engine::Sync}, {9, Engine::GpSimd}, {6, Engine::Sync},
      {8, Engine::GpSimd}, {7, Engine::Sync}, {9, Engine::GpSimd}, {4, Engine::Sync}};
  for (const auto& [queue, engine] : expected) {
    const DmaOptions o = spread.next();
    CHECK(o.queue == queue);
    CHECK(o.issue == engine);
  }
  // One lane with the builder's round robin (queue -1) hands out the same options each time.
  DmaSpread single({{Engine::Sync, QueueCycle({-1})}});
  for (int i = 0; i < 3; ++i) {
    const DmaOptions o = single.next();
    CHECK(o.queue == -1);
    CHECK(o.issue == Engine::Sync);
  }
  DmaSpread none({});
  CHECK_THROWS_WITH_AS(none.next(), "DmaSpread: no issuing engine to spread over",
                       neuronsim::Error);
}
