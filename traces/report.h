#pragma once
// Analyses of a saved trace for `neuronsim report`: opcode times, stalls, critical path, warnings.

#include <cstdint>
#include <string>
#include <vector>

#include "traces/dependency_graph.h"
#include "traces/trace_model.h"

namespace neuronsim::traces {

/// DMAs moving fewer bytes than this per partition are overhead-bound (reference 1.4).
inline constexpr int64_t kSmallDmaBytesPerPartition = 2048;
/// A PE idle gap longer than this re-engages the Trn2 throttle (reference 2.2), in ns, when the
/// trace's machine does not record its throttle_window_ns.
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

/// DependencyGraph(model).criticalPath().
CriticalPath criticalPath(const TraceModel& model);

/// The verdict line: the resource with the largest critical-path share and the what-if with the
/// largest saving, e.g. "bound by DMA (61.2% of the critical path); fastest what-if: ...".
std::string verdictText(const CriticalPath& path, const std::vector<WhatIf>& whatIfs);

/// Warnings about the kernel: small DMAs, PE gaps re-triggering the throttle (only when the trace
/// records a machine with the throttle, so never on Trn1), throttle stalls, uninitialized reads,
/// a trace span that disagrees with the summary. One line each.
std::vector<std::string> traceWarnings(const TraceModel& model);

/// The analysis sections shared by report and viewer: verdict, critical path by resource, what-if
/// estimates, engine time split, DMA efficiency, phases.
std::string analysisText(const TraceModel& model);

/// The whole report: summary, verdict, critical path by resource, what-if estimates, engine time
/// split, top opcodes per track, longest stalls, DMA efficiency, phases, the path's last
/// segments, warnings.
/// `topOpcodes` limits the opcode rows per track.
std::string reportText(const TraceModel& model, int topOpcodes = 5);

}  // namespace neuronsim::traces
