// Sweep documents: header, per-configuration entries, table order, and merging shards.
#include "kernels/sweep/sweep_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

bool fasterFirst(const nlohmann::json& a, const nlohmann::json& b) {
  const bool aOk = a.at("status") == "ok", bOk = b.at("status") == "ok";
  if (aOk != bOk) return aOk;
  if (aOk && a.at("total_ns") != b.at("total_ns"))
    return a.at("total_ns").get<double>() < b.at("total_ns").get<double>();
  return a.at("index").get<int64_t>() < b.at("index").get<int64_t>();
}

/// Sets same_program_as on every result whose program an earlier result has: the first such
/// result's index. (A merge marks again: a row a shard marked is marked in the whole sweep too,
/// perhaps as the same as a row of another shard.)
void markSamePrograms(std::vector<nlohmann::json>& results) {
  std::map<std::string, int64_t> first;  // program fingerprint -> index of its first result
  for (nlohmann::json& result : results) {
    const auto program = result.find("program");
    if (program == result.end() || !program->is_string()) continue;
    const auto [it, isFirst] =
        first.emplace(program->get<std::string>(), result.at("index").get<int64_t>());
    if (!isFirst) result["same_program_as"] = it->second;
  }
}

/// Throws unless `result` is an entry sweepResult() could have written for a grid of `size`.
void checkResult(const nlohmann::json& result, int64_t size) {
  if (!result.is_object() || !result.contains("index") || !result["index"].is_number_integer() ||
      result["index"].get<int64_t>() < 0 || result["index"].get<int64_t>() >= size)
    throw Error("a result has no valid index");
  if (!result.contains("params") || !result["params"].is_object())
    throw Error(fmt::format("result {} has no params", result["index"].dump()));
  const auto status = result.find("status");
  if (status != result.end() && *status == "failed" && result.contains("reason")) return;
  for (const char* key : {"total_ns", "roofline_percent", "mfu_percent", "mbu_percent"})
    if (status == result.end() || *status != "ok" || !result.contains(key) ||
        !result[key].is_number())
      throw Error(fmt::format("result {} has no status ok with {} or failed with a reason",
                              result["index"].dump(), key));
}

/// The shard a document holds: {I, N}, {1, 1} for a whole sweep.
Shard shardOfDocument(const nlohmann::json& document) {
  const auto shard = document.find("shard");
  if (shard == document.end()) return {1, 1};
  try {
    if (shard->is_string()) return parseShard(shard->get<std::string>());
  } catch (const Error&) {
  }
  throw Error(fmt::format("its shard {} is not \"I/N\" with 1 <= I <= N", shard->dump()));
}

/// A document's sweep header with race_check true where it is missing: a file written before
/// race_check was recorded ran with race detection, the only mode then. Throws unless it is a
/// boolean.
nlohmann::json withRaceCheck(nlohmann::json sweep) {
  const auto check = sweep.emplace("race_check", true).first;
  if (!check->is_boolean())
    throw Error(fmt::format("its race_check {} is not true or false", check->dump()));
  return sweep;
}

}  // namespace

nlohmann::json sweepHeader(const SweepSetup& setup, const std::vector<SweepAxis>& axes,
                           int64_t configurations) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, shape] : setup.shapes) shapes[name] = shape;
  nlohmann::json axisList = nlohmann::json::array();
  for (const SweepAxis& axis : axes)
    axisList.push_back({{"param", axis.param}, {"values", axis.values}});
  return {{"kernel", setup.spec->name},
          {"dtype", std::string(isa::dtypeName(setup.dtype))},
          {"machine", setup.machine},
          {"sets", setup.sets},
          {"race_check", setup.raceCheck},
          {"shapes", shapes},
          {"axes", axisList},
          {"configurations", configurations}};
}

nlohmann::json sweepResult(const SweepPoint& point, const ChildOutcome& outcome) {
  nlohmann::json result = {{"index", point.index}};
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : point.params) params[name] = value;
  result["params"] = params;
  nlohmann::json metrics =
      outcome.ok ? nlohmann::json::parse(outcome.text, nullptr, false) : nlohmann::json();
  if (metrics.is_object()) {
    result["status"] = "ok";
    result.update(metrics);
  } else {
    result["status"] = "failed";
    result["reason"] = oneLine(outcome.ok ? "unreadable result from the child" : outcome.text);
  }
  result["host_seconds"] = outcome.hostSeconds;
  result["peak_rss_bytes"] = outcome.peakRssBytes;
  return result;
}

nlohmann::json sweepDocument(nlohmann::json header, std::optional<Shard> shard,
                             std::vector<nlohmann::json> results) {
  std::sort(results.begin(), results.end(), fasterFirst);
  markSamePrograms(results);
  nlohmann::json document = {{"sweep", std::move(header)}};
  if (shard && shard->count > 1)
    document["shard"] = fmt::format("{}/{}", shard->index, shard->count);
  document["results"] = std::move(results);
  return document;
}

nlohmann::json mergeSweeps(const std::vector<std::pair<std::string, nlohmann::json>>& files) {
  if (files.empty()) throw Error("sweep merge: expected shard result files (FILE.json ...)");
  std::optional<nlohmann::json> header;
  int64_t shardCount = 0;
  std::map<int64_t, std::string> shardFile;   // shard index -> file
  std::map<int64_t, std::string> resultFile;  // result index -> file
  std::vector<nlohmann::json> results;
  for (const auto& [file, document] : files) {
    try {
      if (!document.is_object() || !document.contains("sweep") || !document["sweep"].is_object() ||
          !document.contains("results") || !document["results"].is_array())
        throw Error("not a sweep result file (no sweep and results)");
      const nlohmann::json sweep = withRaceCheck(document["sweep"]);
      if (!sweep.contains("configurations") || !sweep["configurations"].is_number_integer())
        throw Error("not a sweep result file (no configurations)");
      if (!header) header = sweep;
      if (sweep["race_check"] != (*header)["race_check"])
        throw Error(fmt::format(
            "its race_check is {} but {}'s is {}: the shards of one sweep run with the same race "
            "check (a file without race_check ran with it, the only mode then)",
            sweep["race_check"].dump(), files[0].first, (*header)["race_check"].dump()));
      for (const auto& [key, value] : header->items())
        if (!sweep.contains(key) || sweep[key] != value)
          throw Error(
              fmt::format("a different sweep than {} (its {} differs)", files[0].first, key));
      if (sweep.size() != header->size())
        throw Error(fmt::format("a different sweep than {} (other keys)", files[0].first));
      const Shard shard = shardOfDocument(document);
      if (shardCount == 0) shardCount = shard.count;
      if (shard.count != shardCount)
        throw Error(fmt::format("shard {}/{} does not split the sweep like {} (into {})",
                                shard.index, shard.count, files[0].first, shardCount));
      if (!shardFile.emplace(shard.index, file).second)
        throw Error(fmt::format("shard {}/{} is also in {}", shard.index, shard.count,
                                shardFile[shard.index]));
      const int64_t size = sweep["configurations"].get<int64_t>();
      for (const nlohmann::json& result : document["results"]) {
        checkResult(result, size);
        const int64_t index = result["index"].get<int64_t>();
        if (index % shardCount != shard.index - 1)
          throw Error(fmt::format("configuration {} is not in shard {}/{}", index, shard.index,
                                  shardCount));
        if (!resultFile.emplace(index, file).second)
          throw Error(fmt::format("configuration {} is also in {}", index, resultFile[index]));
        results.push_back(result);
      }
    } catch (const Error& e) {
      throw Error(fmt::format("sweep merge: {}: {}", file, e.what()));
    }
  }
  for (int64_t i = 1; i <= shardCount; ++i)
    if (!shardFile.count(i))
      throw Error(fmt::format("sweep merge: shard {}/{} is missing", i, shardCount));
  const int64_t size = (*header)["configurations"].get<int64_t>();
  if (static_cast<int64_t>(results.size()) != size)
    throw Error(fmt::format("sweep merge: the shards hold {} of the sweep's {} configurations",
                            results.size(), size));
  return sweepDocument(*header, std::nullopt, std::move(results));
}

}  // namespace neuronsim::kernels
