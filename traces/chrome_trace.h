#pragma once
// Chrome trace-event JSON (loadable in Perfetto UI and chrome://tracing) and reading it back.

#include <nlohmann/json.hpp>
#include <string>

#include "isa/program.h"
#include "traces/event.h"

namespace neuronsim::traces {

/// Writes the trace of one run: a track per engine and DMA queue, counters, flow arrows,
/// with `summary` embedded so report/diff/view can work from the file alone. Writes to a
/// temporary and renames. Throws neuronsim::Error when the file cannot be written.
void writeChromeTrace(const std::string& path, const isa::Program& program, const EventLog& log,
                      const nlohmann::json& summary);

/// Reads a trace written by writeChromeTrace; throws neuronsim::Error naming the file.
nlohmann::json readTrace(const std::string& path);

}  // namespace neuronsim::traces
