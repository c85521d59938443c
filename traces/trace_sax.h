#pragma once
// Streaming read of a Chrome trace: each event of traceEvents handed over flat, never kept as JSON.

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "traces/flat_event.h"

namespace neuronsim::traces {

/// What a streamed trace gave besides its events.
struct StreamedTrace {
  bool valid = false;             ///< the text is one well-formed JSON document
  bool isObject = false;          ///< ... whose top level is an object
  bool hasEvents = false;         ///< ... with a traceEvents array
  nlohmann::json neuronsim;       ///< the neuronsim section (null when absent)
  std::set<std::string> topKeys;  ///< the top-level object's keys
};

/// Parses `text`, calling `onEvent` for every object in the top-level traceEvents array (its
/// scalar fields and scalar args; the reference is only valid during the call).
StreamedTrace streamTrace(const std::string& text,
                          const std::function<void(const FlatEvent&)>& onEvent);

}  // namespace neuronsim::traces
