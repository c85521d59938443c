#pragma once
// Where each engine's time went: busy, waiting on a named producer, starved, stalled inside the
// engine, or done.

#include <string>
#include <vector>

#include "traces/trace_model.h"

namespace neuronsim::traces {

/// Time an engine's head instruction waited on one producer track.
struct ProducerWait {
  std::string producer;  ///< track of the releasing event ("vector", "dma.q3")
  int64_t count = 0;     ///< instructions that waited on it
  double ns = 0;
  int64_t longestIndex = -1;  ///< the instruction that waited longest
  double longestNs = 0;
};

/// One engine's [0, T] split. A semaphore wait counts as dependency from the moment its producer
/// started (the producer was working on what this engine needs: a faster producer shortens it),
/// and as starved before that (upstream had not even reached the producer: this engine simply had
/// nothing to do). For a DMA producer "started" is its issue. `done` is the time after the
/// engine's last instruction (nothing left to issue; all of T when it has none).
struct EngineTime {
  std::string engine;
  double busyNs = 0;
  double dependencyNs = 0;
  double starvedNs = 0;
  double internalNs = 0;  ///< engine_busy (interlock), throttle, access_conflict, dma_bandwidth
  double doneNs = 0;
  std::vector<ProducerWait> producers;  ///< largest first
};

/// Per engine (tensor, vector, scalar, gpsimd, sync), against `totalNs` (the kernel's time).
std::vector<EngineTime> engineTimes(const TraceModel& model, double totalNs);

}  // namespace neuronsim::traces
