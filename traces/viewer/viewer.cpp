// Builds the viewer's embedded data and the HTML page around it.
#include "traces/viewer/viewer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>

#include "isa/error.h"
#include "isa/file_write.h"
#include "traces/json_writer.h"
#include "traces/report.h"
#include "traces/summary.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

/// Display order: engines, then queues; lanes right after their base track.
int64_t trackOrder(int tid) {
  const int base = tid % kLaneTidStride, lane = tid / kLaneTidStride;
  return static_cast<int64_t>(base) * 100 + lane;
}

void num(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void num(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

/// Table of distinct strings; id() returns the position.
struct StringTable {
  std::map<std::string, int64_t> ids;
  std::vector<const std::string*> order;
  int64_t id(const std::string& s) {
    auto [it, added] = ids.emplace(s, static_cast<int64_t>(order.size()));
    if (added) order.push_back(&it->first);
    return it->second;
  }
  void write(std::string& out) const {
    out.push_back('[');
    for (size_t i = 0; i < order.size(); ++i) {
      if (i) out.push_back(',');
      appendJsonString(out, *order[i]);
    }
    out.push_back(']');
  }
};

template <typename T, typename F>
void array(std::string& out, const char* key, const std::vector<size_t>& rows, F get) {
  out.append(",\"").append(key).append("\":[");
  for (size_t k = 0; k < rows.size(); ++k) {
    if (k) out.push_back(',');
    num(out, static_cast<T>(get(rows[k])));
  }
  out.push_back(']');
}

/// Makes JSON text safe inside a <script> element: '<' only occurs inside strings, where \u003c
/// means the same.
void escapeScriptEnd(std::string& text) {
  if (text.find('<') == std::string::npos) return;
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<')
      out.append("\\u003c");
    else
      out.push_back(c);
  }
  text.swap(out);
}

/// The critical path as a row of segments (consecutive steps on one track merged), coloured by
/// track.
void writeCriticalRow(std::string& out, const TraceModel& model) {
  const CriticalPath path = criticalPath(model);
  std::vector<std::string> labels;
  std::vector<double> starts, durations;
  std::vector<int64_t> trackIds, counts;
  double cursor = 0;
  for (size_t k = 0; k < path.steps.size(); ++k) {
    const std::string& track = model.spans[path.steps[k]].track;
    const double owned = path.ownedNs[k];
    if (!trackIds.empty() && labels[static_cast<size_t>(trackIds.back())] == track) {
      durations.back() += owned;
      ++counts.back();
    } else {
      auto it = std::find(labels.begin(), labels.end(), track);
      if (it == labels.end()) it = labels.insert(labels.end(), track);
      trackIds.push_back(it - labels.begin());
      starts.push_back(cursor);
      durations.push_back(owned);
      counts.push_back(1);
    }
    cursor += owned;
  }
  out.append("{\"name\":\"critical path\",\"critical\":true,\"bound\":");
  appendJsonString(out, path.bound);
  out.append(",\"labels\":[");
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out.push_back(',');
    appendJsonString(out, labels[i]);
  }
  out.push_back(']');
  std::vector<size_t> all(starts.size());
  std::iota(all.begin(), all.end(), size_t{0});
  array<double>(out, "s", all, [&](size_t i) { return starts[i]; });
  array<double>(out, "d", all, [&](size_t i) { return durations[i]; });
  array<int64_t>(out, "o", all, [&](size_t i) { return trackIds[i]; });
  array<int64_t>(out, "n", all, [&](size_t i) { return counts[i]; });
  out.push_back('}');
}

}  // namespace

std::string viewerData(const TraceModel& model, const std::string& title) {
  std::map<int, std::vector<size_t>> byTid;
  for (const auto& [tid, name] : model.tracks) byTid[tid];
  for (int e = 0; e < isa::kNumEngines; ++e) byTid[engineTid(static_cast<isa::Engine>(e))];
  for (size_t i = 0; i < model.spans.size(); ++i) byTid[model.spans[i].tid].push_back(i);
  std::vector<int> tids;
  for (auto& [tid, list] : byTid) {
    const bool engine =
        tid >= engineTid(isa::Engine::Tensor) && tid <= engineTid(isa::Engine::Sync);
    if (list.empty() && !engine) continue;
    tids.push_back(tid);
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return model.spans[a].startNs < model.spans[b].startNs;
    });
  }
  std::stable_sort(tids.begin(), tids.end(),
                   [](int a, int b) { return trackOrder(a) < trackOrder(b); });

  StringTable opcodes, causes, semaphores, assembly;
  std::string out = "{\"title\":";
  appendJsonString(out, title);
  out.append(",\"summaryText\":");
  appendJsonString(out, summaryText(model.summary));
  out.append(",\"summary\":").append(model.summary.dump());
  out.append(",\"warnings\":[");
  const auto warnings = traceWarnings(model);
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (i) out.push_back(',');
    appendJsonString(out, warnings[i]);
  }
  out.push_back(']');
  out.append(",\"total\":");
  num(out, std::max(model.summary.value("total_ns", 0.0), model.maxEndNs));
  out.append(",\"tracks\":[");
  writeCriticalRow(out, model);
  for (size_t t = 0; t < tids.size(); ++t) {
    const auto& rows = byTid[tids[t]];
    const auto& spans = model.spans;
    out.push_back(',');
    out.append("{\"name\":");
    appendJsonString(out, trackName(tids[t]));
    out.append(",\"dma\":").append(tids[t] % kLaneTidStride >= kDmaTidBase ? "true" : "false");
    array<double>(out, "s", rows, [&](size_t i) { return spans[i].startNs; });
    array<double>(out, "d", rows, [&](size_t i) { return spans[i].endNs - spans[i].startNs; });
    array<int64_t>(out, "o", rows, [&](size_t i) { return opcodes.id(spans[i].opcode); });
    array<int64_t>(out, "i", rows, [&](size_t i) { return spans[i].index; });
    array<double>(out, "st", rows, [&](size_t i) { return spans[i].stallNs; });
    array<int64_t>(out, "c", rows, [&](size_t i) { return causes.id(spans[i].stallCause); });
    array<int64_t>(out, "sem", rows, [&](size_t i) { return semaphores.id(spans[i].semaphore); });
    array<int64_t>(out, "w", rows, [&](size_t i) { return spans[i].waitedOn; });
    array<int64_t>(out, "b", rows, [&](size_t i) { return spans[i].bytes; });
    array<int64_t>(out, "f", rows, [&](size_t i) { return spans[i].flops; });
    array<int64_t>(out, "a", rows, [&](size_t i) { return assembly.id(spans[i].assembly); });
    out.push_back('}');
  }
  out.append("],\"counters\":[");
  for (size_t c = 0; c < model.counters.size(); ++c) {
    const auto& series = model.counters[c];
    if (c) out.push_back(',');
    out.append("{\"name\":");
    appendJsonString(out, series.name);
    out.append(",\"t\":[");
    for (size_t k = 0; k < series.points.size(); ++k) {
      if (k) out.push_back(',');
      num(out, series.points[k].first);
    }
    out.append("],\"v\":[");
    for (size_t k = 0; k < series.points.size(); ++k) {
      if (k) out.push_back(',');
      num(out, series.points[k].second);
    }
    out.append("]}");
  }
  out.append("],\"opcodes\":");
  opcodes.write(out);
  out.append(",\"causes\":");
  causes.write(out);
  out.append(",\"semaphores\":");
  semaphores.write(out);
  out.append(",\"asm\":");
  assembly.write(out);
  out.append("}");
  escapeScriptEnd(out);
  return out;
}

std::string viewerHtml(const TraceModel& model, const std::string& title) {
  static const std::string kMarker = "/*NEURONSIM_DATA*/";
  std::string page = kViewerTemplate;
  const auto at = page.find(kMarker);
  if (at == std::string::npos) throw Error("viewer template has no data marker");
  page.replace(at, kMarker.size(), viewerData(model, title));
  return page;
}

void writeViewer(const std::string& path, const TraceModel& model, const std::string& title) {
  isa::writeFileAtomically(path, viewerHtml(model, title));
}

}  // namespace neuronsim::traces
