// The calibration microbenchmarks stay within 15% of the published figures.
#include <doctest/doctest.h>

#include <cmath>

#include "isa/error.h"
#include "sim/calibration/calibration.h"

using namespace neuronsim;

TEST_CASE("calibration: at least 6 cases, each within 15% of its published figure") {
  const std::vector<sim::CalibrationResult> results = sim::runCalibration("", {});
  CHECK(results.size() >= 6);
  for (const sim::CalibrationResult& r : results) {
    INFO(r.name, " [", r.machine, "]: published ", r.published, ", simulated ", r.simulated);
    CHECK(std::fabs(r.errorPercent()) <= 15.0);
  }
}

TEST_CASE("calibration reacts to the model: a slower DMA engine moves the DMA cases") {
  const std::vector<sim::CalibrationResult> slow =
      sim::runCalibration("trn2", {"dma_engine_bytes_per_ns=11.5"});
  bool sawSingleEngine = false;
  for (const sim::CalibrationResult& r : slow) {
    if (r.name.rfind("D1: 32 KiB", 0) != 0) continue;
    sawSingleEngine = true;
    CHECK(r.simulated == doctest::Approx(32768 / 11.5 + 11));
  }
  CHECK(sawSingleEngine);
  CHECK_THROWS_AS(sim::runCalibration("trn7", {}), Error);
}
