// Comparison of two traces, side by side.
#include "traces/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "traces/dependency_graph.h"
#include "traces/engine_time.h"
#include "traces/report.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

double summaryNumber(const nlohmann::json& summary, const std::string& pointer) {
  const nlohmann::json::json_pointer p(pointer);
  return summary.contains(p) && summary.at(p).is_number() ? summary.at(p).get<double>() : 0.0;
}

/// Rows for every key in either map, ordered by track (engines, then queues), then name.
std::vector<DiffRow> merge(const std::map<std::string, double>& a,
                           const std::map<std::string, double>& b) {
  std::map<std::string, DiffRow> rows;
  for (const auto& [k, v] : a) rows[k] = {k, v, 0};
  for (const auto& [k, v] : b) {
    auto& row = rows[k];
    row.name = k;
    row.b = v;
  }
  std::vector<DiffRow> out;
  for (auto& [k, row] : rows) out.push_back(row);
  auto rank = [](const DiffRow& r) { return trackRank(r.name.substr(0, r.name.find(' '))); };
  std::stable_sort(out.begin(), out.end(),
                   [&](const DiffRow& x, const DiffRow& y) { return rank(x) < rank(y); });
  return out;
}

void section(std::string& out, const char* title, const std::vector<DiffRow>& rows,
             const std::string& nameA, const std::string& nameB, double scale, const char* unit) {
  char line[512];
  std::snprintf(line, sizeof line, "\n%s\n  %-32s %18s %18s %18s %9s\n", title, unit,
                nameA.substr(0, 16).c_str(), nameB.substr(0, 16).c_str(), "delta", "change");
  out += line;
  for (const DiffRow& r : rows) {
    const double p = r.percent();
    char pct[32];
    if (std::isinf(p))
      std::snprintf(pct, sizeof pct, "new");
    else
      std::snprintf(pct, sizeof pct, "%+.1f%%", p);
    std::snprintf(line, sizeof line, "  %-32s %18.3f %18.3f %+18.3f %9s\n",
                  r.name.substr(0, 32).c_str(), r.a / scale, r.b / scale, r.delta() / scale, pct);
    out += line;
  }
}

}  // namespace

double DiffRow::percent() const {
  if (a == 0) return b == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return 100.0 * (b - a) / a;
}

namespace {

/// Per-resource critical path and what-if, and engine time parts, of one run.
struct Analysis {
  std::string verdict;
  std::map<std::string, double> critical, whatIf, engineTime;
};

Analysis analyse(const TraceModel& m) {
  Analysis out;
  const DependencyGraph graph(m);
  const CriticalPath path = graph.criticalPath();
  const std::vector<WhatIf> whatIfs = graph.whatIfs();
  out.verdict = verdictText(path, whatIfs);
  for (int r = 0; r < kNumResources; ++r)
    if (path.resourceNs[static_cast<size_t>(r)] > 0)
      out.critical[std::string(resourceName(static_cast<Resource>(r)))] =
          path.resourceNs[static_cast<size_t>(r)];
  for (const WhatIf& w : whatIfs) out.whatIf[std::string(resourceName(w.resource))] = w.endNs;
  const double total = std::max(m.summary.value("total_ns", 0.0), m.maxEndNs);
  for (const EngineTime& t : engineTimes(m, total)) {
    const std::pair<const char*, double> parts[] = {{"busy", t.busyNs},
                                                    {"dependency", t.dependencyNs},
                                                    {"starved", t.starvedNs},
                                                    {"internal", t.internalNs},
                                                    {"done", t.doneNs}};
    for (const auto& [name, ns] : parts) out.engineTime[fmt::format("{} {}", t.engine, name)] = ns;
  }
  return out;
}

/// Rows in a fixed key order (keys of either map), not by track.
std::vector<DiffRow> inOrder(const std::vector<std::string>& keys,
                             const std::map<std::string, double>& a,
                             const std::map<std::string, double>& b) {
  std::vector<DiffRow> out;
  for (const std::string& k : keys) {
    auto ia = a.find(k), ib = b.find(k);
    if (ia == a.end() && ib == b.end()) continue;
    out.push_back({k, ia == a.end() ? 0 : ia->second, ib == b.end() ? 0 : ib->second});
  }
  return out;
}

}  // namespace

TraceDiff diffTraces(const TraceModel& a, const TraceModel& b) {
  TraceDiff diff;
  const Analysis analysisA = analyse(a), analysisB = analyse(b);
  diff.verdictA = analysisA.verdict;
  diff.verdictB = analysisB.verdict;
  std::vector<std::string> resources;
  for (int r = 0; r < kNumResources; ++r)
    resources.emplace_back(resourceName(static_cast<Resource>(r)));
  diff.criticalPath = inOrder(resources, analysisA.critical, analysisB.critical);
  diff.whatIf = inOrder(resources, analysisA.whatIf, analysisB.whatIf);
  std::vector<std::string> parts;
  for (int e = 0; e < isa::kNumEngines; ++e)
    for (const char* part : {"busy", "dependency", "starved", "internal", "done"})
      parts.push_back(fmt::format("{} {}", isa::engineName(static_cast<isa::Engine>(e)), part));
  diff.engineTime = inOrder(parts, analysisA.engineTime, analysisB.engineTime);
  for (const char* key : {"/total_ns", "/instructions", "/dma/bytes", "/dma/transfers", "/flops",
                          "/mfu_percent", "/mbu_percent", "/roofline_percent"})
    diff.totals.push_back({key + 1, summaryNumber(a.summary, key), summaryNumber(b.summary, key)});
  auto tally = [](const TraceModel& m, std::map<std::string, double>& trackNs,
                  std::map<std::string, double>& trackN, std::map<std::string, double>& opNs,
                  std::map<std::string, double>& opN) {
    for (const OpcodeTime& row : opcodeTimes(m)) {
      trackNs[row.track] += row.ns;
      trackN[row.track] += static_cast<double>(row.count);
      opNs[fmt::format("{} {}", row.track, row.opcode)] += row.ns;
      opN[fmt::format("{} {}", row.track, row.opcode)] += static_cast<double>(row.count);
    }
  };
  std::map<std::string, double> tnA, tcA, onA, ocA, tnB, tcB, onB, ocB;
  tally(a, tnA, tcA, onA, ocA);
  tally(b, tnB, tcB, onB, ocB);
  diff.trackTime = merge(tnA, tnB);
  diff.trackCount = merge(tcA, tcB);
  diff.opcodeTime = merge(onA, onB);
  diff.opcodeCount = merge(ocA, ocB);
  return diff;
}

std::string diffText(const TraceDiff& diff, const std::string& nameA, const std::string& nameB) {
  std::string out = fmt::format("A = {}\nB = {}\n", nameA, nameB);
  out += fmt::format("\nverdict A: {}\nverdict B: {}\n", diff.verdictA, diff.verdictB);
  section(out, "totals:", diff.totals, "A", "B", 1, "quantity");
  section(out, "critical path by resource:", diff.criticalPath, "A", "B", 1000, "resource (us)");
  section(out, "what if (kernel time with the resource infinitely fast):", diff.whatIf, "A", "B",
          1000, "resource (us)");
  section(out, "engine time (busy, waiting on a producer, starved, internal stalls, done):",
          diff.engineTime, "A", "B", 1000, "engine part (us)");
  section(out, "busy time per engine and queue:", diff.trackTime, "A", "B", 1000, "track (us)");
  section(out, "events per engine and queue:", diff.trackCount, "A", "B", 1, "track");
  section(out, "time per opcode:", diff.opcodeTime, "A", "B", 1000, "track opcode (us)");
  section(out, "count per opcode:", diff.opcodeCount, "A", "B", 1, "track opcode");
  return out;
}

}  // namespace neuronsim::traces
