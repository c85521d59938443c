// The calibration table: fit cases reproduce the figures constants were chosen from, check
// cases are independent and reported, the error of a published range is measured to its ends.
#include <doctest/doctest.h>

#include <cmath>

#include "isa/error.h"
#include "sim/calibration/calibration.h"

using namespace neuronsim;

TEST_CASE("calibration: fit cases reproduce their figures; both sets are present on both presets") {
  const std::vector<sim::CalibrationResult> results = sim::runCalibration("", {});
  int fits = 0, checks = 0, trn1 = 0, trn2 = 0;
  for (const sim::CalibrationResult& r : results) {
    INFO(r.name, " [", r.machine, "]: published ", r.publishedText(), ", simulated ", r.simulated);
    CHECK(std::isfinite(r.simulated));
    if (r.role == sim::CalibrationRole::Fit) {
      ++fits;
      CHECK(std::fabs(r.errorPercent()) <= 1.0);
    } else {
      ++checks;
    }
    (r.machine == "trn1" ? trn1 : trn2) += 1;
  }
  CHECK(fits >= 2);
  CHECK(checks >= 6);
  CHECK(trn1 >= 2);
  CHECK(trn2 >= 6);
  CHECK(sim::maxErrorPercent(results, sim::CalibrationRole::Fit) <= 1.0);
}

TEST_CASE("calibration reacts to the model: a slower DMA engine moves the DMA cases") {
  const std::vector<sim::CalibrationResult> slow =
      sim::runCalibration("trn2", {"dma_engine_bytes_per_ns=11.5"});
  bool sawSingleEngine = false;
  for (const sim::CalibrationResult& r : slow) {
    if (r.name.rfind("D1: [4, 4096]", 0) != 0) continue;
    sawSingleEngine = true;
    CHECK(r.simulated == doctest::Approx(32768 / 11.5));
    CHECK(r.errorPercent() == doctest::Approx(100.0 * (32768 / 11.5 - 1416) / 1416));
  }
  CHECK(sawSingleEngine);
  for (const sim::CalibrationResult& r : sim::runCalibration("trn1", {}))
    CHECK(r.machine == "trn1");
  CHECK_THROWS_AS(sim::runCalibration("trn7", {}), Error);
}

TEST_CASE("a published range counts as exact inside it and is measured to its nearer end") {
  sim::CalibrationResult r{"x", "trn2", sim::CalibrationRole::Check, 75, 100, 80};
  CHECK(r.errorPercent() == 0);
  CHECK(r.publishedText() == "75-100");
  r.simulated = 60;
  CHECK(r.errorPercent() == doctest::Approx(-20.0));
  r.simulated = 110;
  CHECK(r.errorPercent() == doctest::Approx(10.0));
  const sim::CalibrationResult point{"y", "trn1", sim::CalibrationRole::Fit, 200, 200, 190};
  const std::vector<sim::CalibrationResult> both = {
      r, point, {"z", "trn1", sim::CalibrationRole::Check, 100, 100, 97}};
  CHECK(sim::maxErrorPercent(both, sim::CalibrationRole::Check) == doctest::Approx(10.0));
  CHECK(sim::maxErrorPercent(both, sim::CalibrationRole::Check, "trn2") == doctest::Approx(10.0));
  CHECK(sim::maxErrorPercent(both, sim::CalibrationRole::Check, "trn1") == doctest::Approx(3.0));
  CHECK(sim::maxErrorPercent(both, sim::CalibrationRole::Fit, "trn2") == 0);
  CHECK(point.errorPercent() == doctest::Approx(-5.0));
  CHECK(point.publishedText() == "200");
  CHECK(std::string(sim::roleName(point.role)) == "fit");
}
