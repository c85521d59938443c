// Semaphore timelines: first time a value is reached, out-of-order landing, folding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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

TEST_CASE("firstReach equals a plain scan of the increments for any mix of deltas") {
  // Deltas of 1 to 4 (some out of time order), no folding: every value from 0 past the
  // final one must be first reached where a linear scan of the sorted increments says.
  struct Landed {
    int64_t at, delta, by;
  };
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SemaphoreTimeline t;
    std::vector<Landed> landed;
    uint32_t state = seed;
    const auto next = [&] { return state = state * 1103515245u + 12345u, (state >> 16) & 0x7fff; };
    for (int64_t i = 0; i < 40; ++i) {
      const int64_t delta = 1 + static_cast<int64_t>(next() % (seed % 4 + 1));
      const int64_t at = 10 * i + (next() % 3 == 0 ? -25 : 0);
      t.add(ps(at), delta, i, ps(-1000));
      landed.push_back({at, delta, i});
    }
    std::stable_sort(landed.begin(), landed.end(),
                     [](const Landed& a, const Landed& b) { return a.at < b.at; });
    for (int64_t value = 1; value <= t.finalValue() + 1; ++value) {
      int64_t sum = 0;
      SemaphoreTimeline::Reach expected;
      for (const Landed& l : landed) {
        sum += l.delta;
        if (sum >= value) {
          expected = {ps(l.at), l.by};
          break;
        }
      }
      CAPTURE(seed);
      CAPTURE(value);
      CHECK(t.firstReach(value).at == expected.at);
      CHECK(t.firstReach(value).by == expected.by);
    }
  }
}
