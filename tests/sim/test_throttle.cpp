// The Trn2 PE throttle ramp and its re-engagement, on the plain model.
#include <doctest/doctest.h>

#include "sim/cost/pe_throttle.h"

using namespace neuronsim;

TEST_CASE("throttle starts at 50% and reaches full rate after the ramp") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  sim::PeThrottle t(m);
  t.beginAt(100);
  CHECK(t.rateAt(100) == doctest::Approx(0.5));
  CHECK(t.rateAt(1600) == doctest::Approx(0.75));
  CHECK(t.rateAt(3099.9) < 1.0);
  CHECK(t.rateAt(3100) == doctest::Approx(1.0));
  // 213.33 ns of work from the ramp start: 0.5x + x^2/12000 = 213.33 gives x = 400 ns.
  CHECK(t.endFor(100, 512 / 2.4) == doctest::Approx(500.0));
  // Work spanning the ramp end: ramp gives 0.75 * 3000 = 2250 ns of work.
  CHECK(t.endFor(100, 2250 + 10) == doctest::Approx(3110.0));
  CHECK(t.endFor(3100, 10) == doctest::Approx(3110.0));
}

TEST_CASE("throttle re-engages below 50% utilization over the window, not at 50%") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  sim::PeThrottle exactlyHalf(m);
  exactlyHalf.beginAt(0);
  exactlyHalf.recordBusy(0, 5000);
  exactlyHalf.recordBusy(6500, 8000);  // busy 1500 of [5000, 8000] with the next start at 8000
  exactlyHalf.beginAt(8000);
  CHECK(exactlyHalf.rampStartNs() == doctest::Approx(0.0));
  CHECK(exactlyHalf.rateAt(8000) == doctest::Approx(1.0));

  sim::PeThrottle belowHalf(m);
  belowHalf.beginAt(0);
  belowHalf.recordBusy(0, 5000);
  belowHalf.recordBusy(6501, 8000);  // 1499 of 3000
  belowHalf.beginAt(8000);
  CHECK(belowHalf.rampStartNs() == doctest::Approx(8000.0));
  CHECK(belowHalf.rateAt(8000) == doctest::Approx(0.5));
}

TEST_CASE("trn1 has no throttle") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  sim::PeThrottle t(m);
  t.beginAt(0);
  CHECK(t.rateAt(0) == 1.0);
  CHECK(t.endFor(0, 100) == 100.0);
}
