#pragma once
// A sweep's results as one JSON document: what was swept, each configuration's outcome, and the
// joining of shard documents into the document a single-machine sweep writes.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/sweep/child_pool.h"
#include "kernels/sweep/sweep_grid.h"
#include "kernels/sweep/sweep_point.h"

namespace neuronsim::kernels {

/// What a sweep holds fixed and varies: kernel, dtype, machine, sets, shapes, axes and the grid
/// size. Shards merge only when their headers are equal.
nlohmann::json sweepHeader(const SweepSetup& setup, const std::vector<SweepAxis>& axes,
                           int64_t configurations);

/// One configuration's entry: index, params {name: text}, status "ok" with the runSweepPoint
/// metrics or "failed" with a one-line reason, and the host cost (host_seconds, peak_rss_bytes).
nlohmann::json sweepResult(const SweepPoint& point, const ChildOutcome& outcome);

/// {"sweep": header, "shard": "I/N" (a shard of several only), "results": [...]}, the results
/// in table order: fastest first, ties and failures by grid index, failures last. A result whose
/// program (fingerprint) an earlier one in that order has gets same_program_as: that one's index.
nlohmann::json sweepDocument(nlohmann::json header, std::optional<Shard> shard,
                             std::vector<nlohmann::json> results);

/// Joins shard documents (file name, parsed JSON) into one complete sweep document. Throws
/// neuronsim::Error "sweep merge: <file>: <rule>" for a file that is no sweep result, sweeps that
/// differ (race_check included: a header without it is one with race_check true, from before it
/// was recorded), mixed shard counts, a shard given twice or missing.
nlohmann::json mergeSweeps(const std::vector<std::pair<std::string, nlohmann::json>>& files);

}  // namespace neuronsim::kernels
