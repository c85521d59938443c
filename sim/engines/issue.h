#pragma once
// What the timing of one instruction came to: when it was ready, started, freed its engine
// and landed its results, and what held it back.

#include <cstdint>

#include "sim/cost/clock.h"
#include "traces/event.h"

namespace neuronsim::sim {

/// Why an instruction started after it reached the head of its stream: the last constraint
/// that pushed its start later.
struct Stall {
  traces::StallCause cause = traces::StallCause::None;
  int32_t sem = -1;   ///< Semaphore: the semaphore
  int64_t value = 0;  ///< Semaphore: the value waited for
  int64_t by = -1;    ///< the instruction whose signal or result released it, or -1
};

/// When one instruction ran on its engine.
struct Issue {
  Tick ready;      ///< reached the head of its stream
  Tick start;      ///< began; its @read signals land here
  Tick executing;  ///< began executing as a profiler shows it: `start`, or earlier for a
                   ///< TensorE instruction the throttle held back (it runs slowed down from here)
  Tick end;        ///< the engine is free again
  Tick complete;   ///< its results landed; its @complete signals land here
  Cycles cycles;   ///< engine cycles charged
  Stall stall;
  double throttleRate = 1.0;  ///< TensorE: the throttle's rate when it was ready to start
};

}  // namespace neuronsim::sim
