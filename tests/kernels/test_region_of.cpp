// regionOf on HBM patterns: the boxes cover exactly the elements touched, once each, rows
// ascending, vertically adjacent equal columns merged; random patterns, row-stepping ones included.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <utility>

#include "kernels/builder/dependency_tracker.h"

using neuronsim::isa::AccessPattern;
using neuronsim::isa::Dim;
using neuronsim::kernels::Box;
using neuronsim::kernels::regionOf;

namespace {

std::set<int64_t> elementsOf(const AccessPattern& ap) {
  std::vector<Dim> dims{Dim{ap.partitionStep, ap.partitionCount}};
  dims.insert(dims.end(), ap.dims.begin(), ap.dims.end());
  std::set<int64_t> out;
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    int64_t e = ap.offset;
    for (size_t j = 0; j < dims.size(); ++j) e += index[j] * dims[j].step;
    out.insert(e);
    int j = static_cast<int>(dims.size()) - 1;
    while (j >= 0 && ++index[j] == dims[j].num) index[j--] = 0;
    if (j < 0) return out;
  }
}

}  // namespace

TEST_CASE("regionOf: HBM boxes are the touched elements, merged by rows") {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  int multiRowBoxes = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    AccessPattern ap;
    ap.space = neuronsim::isa::Space::Hbm;
    ap.tensor = 0;
    ap.partitionCount = pick(1, 8);
    ap.partitionStep = pick(-40, 40);
    const int rank = pick(0, 2);
    for (int d = 0; d < rank; ++d) ap.dims.push_back(Dim{pick(-40, 40), pick(1, 6)});
    if (rank > 0 && pick(0, 1)) ap.dims.back().step = 1;
    int64_t lowest = std::min<int64_t>(0, ap.partitionStep * (ap.partitionCount - 1));
    for (const Dim& d : ap.dims) lowest += std::min<int64_t>(0, d.step * (d.num - 1));
    ap.offset = pick(0, 30) - lowest;
    // Often a row length some dim steps by, so that rows stack.
    const int64_t steps[] = {ap.partitionStep, rank > 0 ? ap.dims[0].step : 0};
    const int64_t stepped = std::abs(steps[pick(0, 1)]);
    const int64_t rowLength = pick(0, 1) && stepped > 0 ? stepped : pick(1, 24);

    const std::set<int64_t> elements = elementsOf(ap);
    const std::vector<Box> boxes = regionOf(ap, rowLength).boxes;
    INFO("trial " << trial);
    std::set<int64_t> covered;
    size_t cells = 0;
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Box& b = boxes[i];
      REQUIRE(b.lo < b.hi);
      REQUIRE(b.p0 < b.p1);
      REQUIRE(b.p1 <= rowLength);
      for (int64_t row = b.lo; row < b.hi; ++row)
        for (int64_t col = b.p0; col < b.p1; ++col, ++cells) covered.insert(row * rowLength + col);
      if (b.hi - b.lo > 1) ++multiRowBoxes;
      if (i == 0) continue;
      const Box& prev = boxes[i - 1];
      CHECK(prev.lo <= b.lo);
      CHECK_FALSE((prev.p0 == b.p0 && prev.p1 == b.p1 && prev.hi == b.lo));
    }
    CHECK(covered == elements);
    CHECK(cells == elements.size());
  }
  CHECK(multiRowBoxes > 500);
}
