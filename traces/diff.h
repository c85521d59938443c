#pragma once
// What changed between two runs: verdict, critical path, what-if, engine time split, total time,
// per-engine and per-opcode time and count.

#include <string>
#include <vector>

#include "traces/trace_model.h"

namespace neuronsim::traces {

/// One compared quantity: `a` in the first run, `b` in the second.
struct DiffRow {
  std::string name;
  double a = 0;
  double b = 0;
  double delta() const { return b - a; }
  /// (b - a) / a in percent; 0 when both are 0, +inf shown as "new" when only b has it.
  double percent() const;
};

/// The comparison of two traces, section by section.
struct TraceDiff {
  std::string verdictA, verdictB;     ///< verdictText of each run
  std::vector<DiffRow> totals;        ///< total_ns, instructions, dma bytes, mfu_percent, ...
  std::vector<DiffRow> criticalPath;  ///< per resource: ns of the critical path
  std::vector<DiffRow> whatIf;        ///< per resource: kernel ns with it infinitely fast
  std::vector<DiffRow>
      engineTime;  ///< per "engine part" (busy, dependency, starved, internal, done): ns
  std::vector<DiffRow> trackTime;   ///< per engine/queue: busy ns (sum of durations)
  std::vector<DiffRow> trackCount;  ///< per engine/queue: events
  std::vector<DiffRow> opcodeTime;  ///< per "track opcode": ns
  std::vector<DiffRow> opcodeCount;
};

TraceDiff diffTraces(const TraceModel& a, const TraceModel& b);
/// Side-by-side text; `nameA`/`nameB` head the columns.
std::string diffText(const TraceDiff& diff, const std::string& nameA, const std::string& nameB);

}  // namespace neuronsim::traces
