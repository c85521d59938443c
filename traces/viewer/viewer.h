#pragma once
// The self-contained HTML timeline of a trace (`neuronsim view`).

#include <string>

#include "traces/trace_model.h"

namespace neuronsim::traces {

/// The page's data as compact JSON: summary, tracks in display order with their events as
/// parallel arrays sorted by start (ns), counters, and string tables.
std::string viewerData(const TraceModel& model, const std::string& title);
/// The full HTML page: the template with viewerData embedded; no external resources.
std::string viewerHtml(const TraceModel& model, const std::string& title);
/// Writes viewerHtml to `path`; throws neuronsim::Error naming the path on failure.
void writeViewer(const std::string& path, const TraceModel& model, const std::string& title);

/// The page template (viewer_template.cpp); `/*NEURONSIM_DATA*/` marks where the data goes.
extern const char* const kViewerTemplate;

}  // namespace neuronsim::traces
