#pragma once
// One sweep configuration simulated timing-only, reduced to the numbers a sweep compares.

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "isa/dtype.h"
#include "kernels/registry.h"
#include "kernels/sweep/sweep_grid.h"

namespace neuronsim::kernels {

/// What every configuration of a sweep shares.
struct SweepSetup {
  const KernelSpec* spec = nullptr;
  std::vector<std::pair<std::string, Shape>> shapes;  ///< --shape NAME=AxB, as given
  isa::Dtype dtype = isa::Dtype::Fp32;
  std::string machine = "trn2";   ///< preset name or machine FILE.json
  std::vector<std::string> sets;  ///< --set KEY=VALUE machine overrides
  bool raceCheck = true;          ///< off: no race detection, one thread drives every engine
};

/// Simulates `point` timing-only and returns its metrics: total_ns, roofline_percent,
/// roofline_bound, bound_engine (the busiest engine, or "dma"), mfu_percent, mbu_percent,
/// instructions, program (programFingerprint: equal for configurations that build the same
/// program). Throws neuronsim::Error when the configuration cannot run (a bad parameter
/// combination, SBUF overflow, ...) or, with setup.raceCheck, races ("race: ... (and N more)").
nlohmann::json runSweepPoint(const SweepSetup& setup, const SweepPoint& point);

/// The busiest engine of a run summary: an engine name, or "dma" when DMA was active longest.
std::string boundingEngine(const nlohmann::json& summary);

}  // namespace neuronsim::kernels
