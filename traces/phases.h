#pragma once
// Time grouped by kernel phase: the builder's instruction notes (library kernels name their
// phases; hand-written assembly's trailing comments are notes too).

#include <array>
#include <string>
#include <vector>

#include "traces/dependency_graph.h"

namespace neuronsim::traces {

/// One note's instructions and transfers.
struct PhaseTime {
  std::string name;
  int64_t instructions = 0;  ///< instructions on engines (DMA triggers included)
  int64_t transfers = 0;
  double firstStartNs = 0;
  double lastEndNs = 0;
  std::array<double, kNumResources> busyNs{};  ///< summed durations by resource (no FixedLatency)
  double criticalNs = 0;                       ///< critical-path time owned by its events
};

/// Phases in order of first start; empty when no event carries a note. Events without a note
/// are grouped as "(no note)" when others have one.
std::vector<PhaseTime> phaseTimes(const TraceModel& model, const CriticalPath& path);

}  // namespace neuronsim::traces
