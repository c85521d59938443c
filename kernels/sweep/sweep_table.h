#pragma once
// A sweep document rendered for people (a table) and for tools (CSV).

#include <nlohmann/json.hpp>
#include <string>

namespace neuronsim::kernels {

/// The table `neuronsim sweep` prints: a title line (", no race check" after the dtype for a
/// sweep run with --no-race-check), then one row per configuration in document
/// order (fastest first): parameters, simulated time, roofline %, roofline bound, busiest engine,
/// MFU, MBU and, when some configuration builds the program of an earlier row, a program column
/// that says which ("same as 4": rank 4's program); a failed configuration shows its reason
/// instead.
std::string sweepTable(const nlohmann::json& document);
/// The same rows as CSV, with program and same_program_as (a grid index) and the host cost
/// columns (host_seconds, peak_rss_bytes).
std::string sweepCsv(const nlohmann::json& document);

}  // namespace neuronsim::kernels
