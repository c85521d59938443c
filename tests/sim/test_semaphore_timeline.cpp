// Semaphore timelines: first time a value is reached, out-of-order landing, folding.
#include <doctest/doctest.h>

#include "sim/core/semaphore_timeline.h"

using neuronsim::sim::SemaphoreTimeline;

TEST_CASE("a timeline answers when a value is first reached - not at N-1 increments, at N") {
  SemaphoreTimeline t;
  t.add(30, 1, 7, 0);
  t.add(10, 1, 5, 0);  // registered later, lands earlier
  t.add(20, 2, 6, 0);
  CHECK(t.firstReach(1).ns == 10);
  CHECK(t.firstReach(1).by == 5);
  CHECK(t.firstReach(3).ns == 20);
  CHECK(t.firstReach(3).by == 6);
  CHECK(t.firstReach(4).ns == 30);
  CHECK(t.firstReach(5).ns == SemaphoreTimeline::kNever);
  CHECK(t.finalValue() == 4);
}

TEST_CASE("settled increments fold into the base without changing answers after the floor") {
  SemaphoreTimeline t;
  for (int i = 1; i <= 5000; ++i) t.add(i, 1, i, i - 1);
  CHECK(t.finalValue() == 5000);
  // Values reached at or before the last floor may be folded: reported as "long ago".
  CHECK(t.firstReach(100).ns <= 100);
  // Values reached after the floor keep their exact time and signaller.
  CHECK(t.firstReach(4999).ns == 4999);
  CHECK(t.firstReach(5000).ns == 5000);
  CHECK(t.firstReach(5000).by == 5000);
  CHECK(t.firstReach(5001).ns == SemaphoreTimeline::kNever);
}
