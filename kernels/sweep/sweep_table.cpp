// The sweep table (aligned columns) and CSV (RFC 4180 quoting).
#include "kernels/sweep/sweep_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace neuronsim::kernels {

namespace {

using Row = std::vector<std::string>;

std::vector<std::string> paramNames(const nlohmann::json& document) {
  std::vector<std::string> names;
  for (const nlohmann::json& axis : document.at("sweep").at("axes"))
    names.push_back(axis.at("param").get<std::string>());
  return names;
}

std::string text(const nlohmann::json& result, const char* key) {
  const auto it = result.find(key);
  if (it == result.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return fmt::format("{}", it->get<int64_t>());
  if (it->is_number()) return fmt::format("{}", it->get<double>());
  return it->dump();
}

std::string csvField(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return fmt::format("{}\"", quoted);
}

}  // namespace

std::string sweepTable(const nlohmann::json& document) {
  const nlohmann::json& sweep = document.at("sweep");
  const nlohmann::json& results = document.at("results");
  const auto failed = std::count_if(results.begin(), results.end(),
                                    [](const nlohmann::json& r) { return r.at("status") != "ok"; });
  // A missing race_check is a document from before it was recorded: checked, the only mode.
  const auto check = sweep.find("race_check");
  const bool unchecked = check != sweep.end() && *check == false;
  std::string out =
      fmt::format("{} on {} ({}{}): {} of {} configurations", text(sweep, "kernel"),
                  text(sweep, "machine"), text(sweep, "dtype"), unchecked ? ", no race check" : "",
                  results.size(), text(sweep, "configurations"));
  if (const auto shard = document.find("shard"); shard != document.end())
    out += fmt::format(" (shard {})", shard->get<std::string>());
  out += failed > 0 ? fmt::format(", {} failed\n", failed) : "\n";

  const std::vector<std::string> names = paramNames(document);
  std::map<int64_t, int> rankOf;  // grid index -> rank
  for (const nlohmann::json& r : results)
    if (r.at("status") == "ok")
      rankOf.emplace(r.at("index").get<int64_t>(), static_cast<int>(rankOf.size()) + 1);
  const bool repeats = std::any_of(results.begin(), results.end(), [](const nlohmann::json& r) {
    return r.contains("same_program_as");
  });
  Row header = {"rank"};
  header.insert(header.end(), names.begin(), names.end());
  for (const char* column : {"time us", "roofline", "bound", "busiest", "MFU", "MBU"})
    header.push_back(column);
  if (repeats) header.push_back("program");
  std::vector<Row> rows = {header};
  int rank = 0;
  for (const nlohmann::json& r : results) {
    const bool ok = r.at("status") == "ok";
    Row row = {ok ? std::to_string(++rank) : "-"};
    for (const std::string& name : names) row.push_back(text(r.at("params"), name.c_str()));
    if (ok) {
      row.push_back(fmt::format("{:.3f}", r.at("total_ns").get<double>() / 1000.0));
      row.push_back(fmt::format("{:.1f}%", r.at("roofline_percent").get<double>()));
      row.push_back(text(r, "roofline_bound"));
      row.push_back(text(r, "bound_engine"));
      row.push_back(fmt::format("{:.1f}%", r.at("mfu_percent").get<double>()));
      row.push_back(fmt::format("{:.1f}%", r.at("mbu_percent").get<double>()));
      if (repeats) {
        const auto same = r.find("same_program_as");
        row.push_back(same == r.end() ? ""
                                      : fmt::format("same as {}", rankOf.at(same->get<int64_t>())));
      }
    } else {
      row.push_back(fmt::format("failed: {}", text(r, "reason")));
    }
    rows.push_back(row);
  }
  // Numbers right-aligned, words left; a failed row's reason spans the metric columns.
  std::vector<bool> right(header.size(), true);
  for (size_t c = 1; c <= names.size(); ++c) right[c] = false;
  right[names.size() + 3] = right[names.size() + 4] = false;
  if (repeats) right.back() = false;
  std::vector<size_t> width(header.size(), 0);
  for (const Row& row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      if (row.size() == header.size() || c <= names.size())
        width[c] = std::max(width[c], row[c].size());
  for (const Row& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      if (row.size() != header.size() && c > names.size()) {
        line += fmt::format(" {}", row[c]);
      } else if (c + 1 == row.size() && !right[c]) {
        line += fmt::format(" {}", row[c]);
      } else {
        line += right[c] ? fmt::format(" {:>{}}", row[c], width[c])
                         : fmt::format(" {:<{}}", row[c], width[c]);
      }
    }
    line.erase(line.find_last_not_of(' ') + 1);  // an empty last column
    out += fmt::format("{}\n", line);
  }
  return out;
}

std::string sweepCsv(const nlohmann::json& document) {
  const std::vector<std::string> names = paramNames(document);
  const std::vector<const char*> metrics = {
      "status",      "total_ns",     "roofline_percent", "roofline_bound", "bound_engine",
      "mfu_percent", "mbu_percent",  "instructions",     "program",        "same_program_as",
      "reason",      "host_seconds", "peak_rss_bytes"};
  std::string out = "index";
  for (const std::string& name : names) out.append(",").append(csvField(name));
  for (const char* metric : metrics) out.append(",").append(metric);
  out += "\n";
  for (const nlohmann::json& r : document.at("results")) {
    out += text(r, "index");
    for (const std::string& name : names)
      out.append(",").append(csvField(text(r.at("params"), name.c_str())));
    for (const char* metric : metrics) out.append(",").append(csvField(text(r, metric)));
    out += "\n";
  }
  return out;
}

}  // namespace neuronsim::kernels
