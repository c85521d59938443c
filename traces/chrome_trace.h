#pragma once
// Chrome trace-event JSON (loadable in Perfetto UI and chrome://tracing); trace_model.h reads it
// back (loadTraceModel).

#include <nlohmann/json.hpp>
#include <string>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/machine_facts.h"

namespace neuronsim::traces {

/// Writes the trace of one run: a track per engine and DMA queue, counters, flow arrows,
/// with `summary` and `machine` embedded so report/diff/view can work from the file alone. Each
/// instruction records every wait's releasing instruction and time (`released_by`, `release_ns`,
/// see semaphore_releases.h), which needs `machine`'s pipeline latencies. Writes to a temporary
/// and renames. Throws neuronsim::Error when the file cannot be written.
void writeChromeTrace(const std::string& path, const isa::Program& program, const EventLog& log,
                      const nlohmann::json& summary, const MachineFacts& machine = {});

}  // namespace neuronsim::traces
