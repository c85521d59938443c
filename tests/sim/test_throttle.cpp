// The Trn2 PE throttle ramp and its re-engagement, on the plain model (times in ticks).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sim/core/rounding.h"
#include "sim/cost/pe_throttle.h"

using namespace neuronsim;
using traces::Tick;

namespace {
Tick ns(double v) {
  return Tick::fromNs(v);
}
}  // namespace

TEST_CASE("throttle starts at 50% and reaches full rate after the ramp") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  sim::PeThrottle t(m);
  t.beginAt(ns(100));
  CHECK(t.rateAt(ns(100)) == 0.5);
  CHECK(t.rateAt(ns(1600)) == 0.75);
  CHECK(t.rateAt(ns(3100) - Tick::fromPs(1)) < 1.0);
  CHECK(t.rateAt(ns(3100)) == 1.0);
  // 157.5 ns of work from the ramp start: 0.5x + x^2/12000 = 157.5 gives x = 300 ns.
  CHECK(t.endFor(ns(100), ns(157.5)) == ns(400));
  // Work spanning the ramp end: the ramp does 0.75 * 3000 = 2250 ns of work.
  CHECK(t.endFor(ns(100), ns(2250 + 10)) == ns(3110));
  CHECK(t.endFor(ns(3100), ns(10)) == ns(3110));
}

TEST_CASE("throttle re-engages below 50% utilization over the window, not at 50%") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  sim::PeThrottle exactlyHalf(m);
  exactlyHalf.beginAt(ns(0));
  exactlyHalf.recordBusy(ns(0), ns(5000));
  exactlyHalf.recordBusy(ns(6500), ns(8000));  // busy 1500 of [5000, 8000], next start at 8000
  exactlyHalf.beginAt(ns(8000));
  CHECK(exactlyHalf.rampStart() == ns(0));
  CHECK(exactlyHalf.rateAt(ns(8000)) == 1.0);

  sim::PeThrottle belowHalf(m);
  belowHalf.beginAt(ns(0));
  belowHalf.recordBusy(ns(0), ns(5000));
  belowHalf.recordBusy(ns(6500) + Tick::fromPs(1), ns(8000));  // 1 ps short of half
  belowHalf.beginAt(ns(8000));
  CHECK(belowHalf.rampStart() == ns(8000));
  CHECK(belowHalf.rateAt(ns(8000)) == 0.5);
}

TEST_CASE("trn1 has no throttle") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  sim::PeThrottle t(m);
  t.beginAt(ns(0));
  CHECK(t.rateAt(ns(0)) == 1.0);
  CHECK(t.endFor(ns(0), ns(100)) == ns(100));
}

TEST_CASE("roundHalfAway rounds as std::llround") {
  // Halves, their neighbours, both signs, the 2^53 edge and the llround fallback.
  std::vector<double> xs = {0.0,
                            -0.0,
                            0.5,
                            -0.5,
                            1.5,
                            -2.5,
                            1e15,
                            1e300,
                            -1e300,
                            0x1p52 + 0.5,
                            0x1p53 + 2.0,
                            0x1p62,
                            -0x1p62,
                            0x1p61 + 1024.0,
                            123456.49999999999,
                            -7.5000000001};
  for (const double half : {0.5, 1.5, 2.5, 1048576.5}) {
    xs.push_back(std::nextafter(half, 0.0));
    xs.push_back(-std::nextafter(half, 0.0));
    xs.push_back(std::nextafter(half, 1e9));
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> wide(-1e12, 1e12);
  for (int i = 0; i < 1000; ++i) xs.push_back(wide(rng));
  for (const double x : xs) {
    CAPTURE(x);
    if (std::abs(x) < 0x1p63) CHECK(sim::roundHalfAway(x) == std::llround(x));
  }
}
