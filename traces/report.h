#pragma once
// Analyses of a saved trace for `neuronsim report`: opcode times, stalls, critical path, warnings.

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_model.h"

namespace neuronsim::traces {

/// DMAs moving fewer bytes than this per partition are overhead-bound (reference 1.4).
inline constexpr int64_t kSmallDmaBytesPerPartition = 2048;
/// A PE idle gap longer than this re-engages the Trn2 throttle (reference 2.2), in ns.
inline constexpr double kThrottleGapNs = 3000;

/// Time spent by one opcode on one track (engine or DMA queue).
struct OpcodeTime {
  std::string track;
  std::string opcode;
  int64_t count = 0;
  double ns = 0;  ///< sum of durations
};
/// Sorted by track order (engines, then queues), then by time, longest first.
std::vector<OpcodeTime> opcodeTimes(const TraceModel& model);

/// Stall time before instructions of one engine (or DMA latency on one queue) with one cause.
struct StallTime {
  std::string track;
  std::string cause;
  int64_t count = 0;
  double ns = 0;
};
/// Only stalls longer than zero; sorted by track order, then time, longest first.
std::vector<StallTime> stallTimes(const TraceModel& model);

/// Indices into model.spans of the `count` instructions that stalled longest (longest first).
std::vector<size_t> longestStalls(const TraceModel& model, size_t count);

/// The chain of events that ends last, walked back through what released each one:
/// the semaphore edge (waited_on) when it stalled on a semaphore, else the previous event of
/// its stream; a DMA transfer goes back to the later of its trigger and the previous transfer
/// on its queue. Each step owns the time from its predecessor's end to its own end, so the
/// shares add up to the end time of the last event.
struct CriticalPath {
  std::vector<size_t> steps;    ///< indices into model.spans, first event first
  std::vector<double> ownedNs;  ///< per step
  std::vector<std::pair<std::string, double>> shareNs;  ///< per track, largest first
  std::string bound;  ///< the track with the largest share ("" when the trace is empty)
  double totalNs = 0;
};
CriticalPath criticalPath(const TraceModel& model);

/// Warnings about the kernel: small DMAs, PE gaps re-triggering the throttle, throttle stalls,
/// uninitialized reads, a trace span that disagrees with the summary. One line each.
std::vector<std::string> traceWarnings(const TraceModel& model);

/// The whole report: summary, top opcodes per track, stalls by cause, critical path, warnings.
/// `topOpcodes` limits the opcode rows per track.
std::string reportText(const TraceModel& model, int topOpcodes = 5);

}  // namespace neuronsim::traces
