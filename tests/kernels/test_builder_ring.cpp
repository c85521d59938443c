// SlidingRing: sliding windows keep their shared positions; a restart refills every index.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/builder/ring.h"

namespace neuronsim::kernels {
namespace {

/// The fills one place() makes, as (index, position, firstFill) triples.
struct Recorder {
  std::vector<SlidingRing::Fill> fills;
  bool skipIndex = false;  ///< report index `skipped` as not written
  int64_t skipped = -1;
  SlidingRing::Filler filler() {
    return [this](const SlidingRing::Fill& f) {
      fills.push_back(f);
      return !(skipIndex && f.index == skipped);
    };
  }
};

bool same(const SlidingRing::Fill& a, const SlidingRing::Fill& b) {
  return a.index == b.index && a.position == b.position && a.firstFill == b.firstFill;
}

TEST_CASE("sliding ring: a window sliding by one fills only the index it adds") {
  SlidingRing ring(6);
  Recorder r;
  ring.place(0, 0, 0, 3, r.filler());
  REQUIRE(r.fills.size() == 3);
  for (int64_t i = 0; i < 3; ++i) CHECK(same(r.fills[i], {i, i, true}));
  ring.place(1, 0, 1, 3, r.filler());
  ring.place(2, 0, 2, 3, r.filler());
  REQUIRE(r.fills.size() == 5);
  CHECK(same(r.fills[3], {3, 3, true}));
  CHECK(same(r.fills[4], {4, 4, true}));
  CHECK(ring.take(0) == std::vector<int64_t>{0, 1, 2});
  CHECK(ring.take(1) == std::vector<int64_t>{1, 2, 3});
  CHECK(ring.take(2) == std::vector<int64_t>{2, 3, 4});
  // positions wrap round; a wrapped position was filled before
  ring.place(3, 0, 3, 3, r.filler());
  ring.place(4, 0, 4, 3, r.filler());
  CHECK(same(r.fills[5], {5, 5, true}));
  CHECK(same(r.fills[6], {6, 0, false}));
  CHECK(ring.take(4) == std::vector<int64_t>{4, 5, 0});
  CHECK_THROWS(ring.take(4));  // taken once
}

TEST_CASE("sliding ring: a window sliding by two keeps the indices it shares, a shorter one too") {
  SlidingRing ring(8);
  Recorder r;
  ring.place(0, 0, 0, 4, r.filler());
  ring.place(1, 0, 2, 4, r.filler());  // plane pairs: two planes on
  ring.place(2, 0, 4, 3, r.filler());  // the last, single plane: a shorter window
  REQUIRE(r.fills.size() == 7);
  CHECK(same(r.fills[4], {4, 4, true}));
  CHECK(same(r.fills[5], {5, 5, true}));
  CHECK(same(r.fills[6], {6, 6, true}));
  CHECK(ring.take(1) == std::vector<int64_t>{2, 3, 4, 5});
  CHECK(ring.take(2) == std::vector<int64_t>{4, 5, 6});
  ring.place(3, 0, 9, 4, r.filler());  // past the whole window: nothing shared
  CHECK(ring.take(3) == std::vector<int64_t>{7, 0, 1, 2});
}

TEST_CASE("sliding ring: another series or a jump refills the whole window") {
  SlidingRing ring(4);
  Recorder r;
  ring.place(0, 0, 5, 2, r.filler());
  ring.place(1, 1, 6, 2, r.filler());  // next batch: no sharing
  ring.place(2, 1, 0, 2, r.filler());  // same batch, not one index on
  REQUIRE(r.fills.size() == 6);
  CHECK(ring.take(1) == std::vector<int64_t>{2, 3});
  CHECK(ring.take(2) == std::vector<int64_t>{0, 1});
  CHECK(same(r.fills[4], {0, 0, false}));
}

TEST_CASE("sliding ring: a position whose fill wrote nothing still counts as never filled") {
  SlidingRing ring(2);
  Recorder r;
  r.skipIndex = true;
  r.skipped = 0;  // e.g. a plane in the padding
  ring.place(0, 0, 0, 2, r.filler());
  ring.place(1, 0, 2, 2, r.filler());
  REQUIRE(r.fills.size() == 4);
  CHECK(same(r.fills[2], {2, 0, true}));
  CHECK(same(r.fills[3], {3, 1, false}));
}

}  // namespace
}  // namespace neuronsim::kernels
