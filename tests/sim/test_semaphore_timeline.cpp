// Semaphore timelines: first time a value is reached, out-of-order landing, folding.
#include <doctest/doctest.h>

#include "sim/core/semaphore_timeline.h"

using neuronsim::sim::SemaphoreTimeline;
using neuronsim::traces::Tick;

namespace {
Tick ps(int64_t v) {
  return Tick::fromPs(v);
}
}  // namespace

TEST_CASE("a timeline answers when a value is first reached - not at N-1 increments, at N") {
  SemaphoreTimeline t;
  t.add(ps(30), 1, 7, ps(0));
  t.add(ps(10), 1, 5, ps(0));  // registered later, lands earlier
  t.add(ps(20), 2, 6, ps(0));
  CHECK(t.firstReach(1).at == ps(10));
  CHECK(t.firstReach(1).by == 5);
  CHECK(t.firstReach(3).at == ps(20));
  CHECK(t.firstReach(3).by == 6);
  CHECK(t.firstReach(4).at == ps(30));
  CHECK(t.firstReach(5).at == Tick::never());
  CHECK(t.finalValue() == 4);
}

TEST_CASE("settled increments fold into the base without changing answers after the floor") {
  SemaphoreTimeline t;
  for (int i = 1; i <= 5000; ++i) t.add(ps(i), 1, i, ps(i - 10));
  CHECK(t.finalValue() == 5000);
  // Values reached at or before the last floor may be folded: reported as "long ago".
  CHECK(t.firstReach(100).at <= ps(100));
  // Values reached after the floor keep their exact time and signaller.
  CHECK(t.firstReach(4991).at == ps(4991));
  CHECK(t.firstReach(4991).by == 4991);
  CHECK(t.firstReach(5000).at == ps(5000));
  CHECK(t.firstReach(5000).by == 5000);
  CHECK(t.firstReach(5001).at == Tick::never());
}
