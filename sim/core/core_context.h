#pragma once
// State shared by the modules of one simulated NeuronCore run: the program, semaphores,
// race detector, port arbiter, totals, and the time helpers of the SystemC shell.

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <systemc>
#include <vector>

#include "isa/memory_state.h"
#include "isa/program.h"
#include "sim/core/access_arbiter.h"
#include "sim/core/semaphore_timeline.h"
#include "sim/machine_config.h"
#include "sim/race/race_detector.h"
#include "traces/event.h"
#include "traces/summary.h"

namespace neuronsim::sim {

class DmaModule;

/// A hardware semaphore: its timeline of increments and the event fired when one is added.
struct Semaphore {
  SemaphoreTimeline timeline;
  sc_core::sc_event changed;
};

/// Simulated now, in ns (the kernel resolution is 1 ps).
inline double nowNs() {
  return static_cast<double>(sc_core::sc_time_stamp().value()) / 1000.0;
}

/// Suspends the calling thread until `ns` (rounded up to the next ps); no-op if not later.
inline void waitUntilNs(double ns) {
  const double ticks = std::ceil(ns * 1000.0 - 1e-6);
  const uint64_t now = sc_core::sc_time_stamp().value();
  if (ticks > static_cast<double>(now))
    sc_core::wait(sc_core::sc_time::from_value(static_cast<uint64_t>(ticks) - now));
}

/// Delay from now until `ns`, rounded up to the next ps (zero if not later).
inline sc_core::sc_time delayUntilNs(double ns) {
  const double ticks = std::ceil(ns * 1000.0 - 1e-6);
  const uint64_t now = sc_core::sc_time_stamp().value();
  return ticks > static_cast<double>(now)
             ? sc_core::sc_time::from_value(static_cast<uint64_t>(ticks) - now)
             : sc_core::SC_ZERO_TIME;
}

/// Everything the engine and DMA modules of one run share; owned by simulate().
class CoreContext {
 public:
  CoreContext(const isa::Program& program, const MachineConfig& machine, isa::MemoryState* memory,
              traces::EventSink* sink, bool detectRaces);

  const isa::Program& program;
  const MachineConfig& machine;
  isa::MemoryState* memory;  ///< null in timing-only mode
  traces::EventSink* sink;   ///< null: no events
  std::unique_ptr<Semaphore[]> semaphores;
  std::unique_ptr<RaceDetector> races;  ///< null when race detection is off
  AccessArbiter arbiter;
  traces::RunTotals totals;
  DmaModule* dma = nullptr;
  double endNs = 0;
  std::exception_ptr error;

  /// Registers the signals of `inst` that fire `at`, landing at `ns`, on behalf of
  /// instruction `index`; `vc` is the signaller's vector clock (ignored without races).
  void signal(const isa::Instruction& inst, int64_t index, isa::SignalAt at, double ns,
              const VectorClock* vc);
  void noteEnd(double ns) { endNs = ns > endNs ? ns : endNs; }
  /// Records the first failure and stops the simulation.
  void fail(std::exception_ptr e);
};

}  // namespace neuronsim::sim
