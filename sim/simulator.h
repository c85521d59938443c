#pragma once
// Entry point of the timed model: run a Program on the SystemC NeuronCore.

#include <cstdint>
#include <string>
#include <vector>

#include "isa/memory_state.h"
#include "isa/program.h"
#include "sim/machine_config.h"
#include "traces/event.h"
#include "traces/summary.h"

namespace neuronsim::sim {

struct SimOptions {
  bool timingOnly = false;  ///< skip numerics; times must not change
  bool detectRaces = true;
  traces::EventSink* sink = nullptr;  ///< null: no events built
};

struct SimResult {
  traces::RunTotals totals;
  std::vector<std::string> races;  ///< one line each, both instructions named
  /// One SystemC thread drove every engine: timing-only, no sink, no race detection.
  bool oneThread = false;
};

/// Runs `program` on a fresh simulated NeuronCore. `memory` holds the inputs and receives
/// the outputs (ignored when options.timingOnly). May be called many times per process.
/// Throws neuronsim::Error on deadlock (who waits on which semaphore and value).
SimResult simulate(const isa::Program& program, const MachineConfig& machine,
                   isa::MemoryState* memory, const SimOptions& options = {});

}  // namespace neuronsim::sim
