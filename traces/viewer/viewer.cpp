// Builds the viewer's embedded data and the HTML page around it.
#include "traces/viewer/viewer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include "isa/error.h"
#include "isa/file_write.h"
#include "traces/dma_efficiency.h"
#include "traces/json_writer.h"
#include "traces/report.h"
#include "traces/summary.h"
#include "traces/tick.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

/// Display order: engines, then queues; lanes right after their base track.
int64_t trackOrder(int tid) {
  const int base = tid % kLaneTidStride, lane = tid / kLaneTidStride;
  return static_cast<int64_t>(base) * 100 + lane;
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
  void write(JsonWriter& out, const char* key) const {
    out.key(key).beginArray();
    for (const std::string* s : order) out.value(*s);
    out.endArray();
  }
};

/// An array member with one number per row.
template <typename T, typename F>
void column(JsonWriter& out, const char* key, const std::vector<size_t>& rows, F get) {
  out.key(key).beginArray();
  for (size_t row : rows) out.value(static_cast<T>(get(row)));
  out.endArray();
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

/// The critical path as a row of segments (consecutive pieces of one resource merged), coloured by
/// resource.
void writeCriticalRow(JsonWriter& out, const CriticalPath& path) {
  std::vector<double> starts, durations;
  std::vector<int64_t> resources, counts;
  Tick lastTo;
  for (const PathPiece& p : path.pieces) {
    const auto r = static_cast<int64_t>(p.resource);
    if (!resources.empty() && resources.back() == r && lastTo == Tick::fromNs(p.fromNs)) {
      durations.back() = p.toNs - starts.back();
      ++counts.back();
    } else {
      resources.push_back(r);
      starts.push_back(p.fromNs);
      durations.push_back(p.toNs - p.fromNs);
      counts.push_back(1);
    }
    lastTo = Tick::fromNs(p.toNs);
  }
  out.beginObject().field("name", "critical path").field("critical", true);
  out.field("bound", path.empty() ? std::string_view() : resourceName(path.bound));
  out.key("labels").beginArray();
  for (int r = 0; r < kNumResources; ++r) out.value(resourceName(static_cast<Resource>(r)));
  out.endArray();
  out.array("s", starts).array("d", durations).array("o", resources).array("n", counts);
  out.endObject();
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

  StringTable opcodes, causes, semaphores, assembly, notes;
  notes.id("");
  JsonWriter out;
  out.beginObject().field("title", title).field("summaryText", summaryText(model.summary));
  out.field("analysisText", analysisText(model));
  out.key("summary").json(model.summary.dump());
  out.key("warnings").beginArray();
  for (const std::string& w : traceWarnings(model)) out.value(w);
  out.endArray();
  out.field("total", std::max(model.summary.value("total_ns", 0.0), model.maxEndNs));
  out.key("tracks").beginArray();
  writeCriticalRow(out, criticalPath(model));
  const auto& spans = model.spans;
  for (int tid : tids) {
    const auto& rows = byTid[tid];
    const bool dma = tid % kLaneTidStride >= kDmaTidBase;
    out.beginObject().field("name", trackName(tid)).field("dma", dma);
    column<double>(out, "s", rows, [&](size_t i) { return spans[i].startNs; });
    column<double>(out, "d", rows, [&](size_t i) { return spans[i].endNs - spans[i].startNs; });
    column<int64_t>(out, "o", rows, [&](size_t i) { return opcodes.id(spans[i].opcode); });
    column<int64_t>(out, "i", rows, [&](size_t i) { return spans[i].index; });
    column<double>(out, "st", rows, [&](size_t i) { return spans[i].stallNs; });
    column<int64_t>(out, "c", rows, [&](size_t i) { return causes.id(spans[i].stallCause); });
    column<int64_t>(out, "sem", rows, [&](size_t i) { return semaphores.id(spans[i].semaphore); });
    column<int64_t>(out, "w", rows, [&](size_t i) { return spans[i].waitedOn; });
    column<int64_t>(out, "b", rows, [&](size_t i) { return spans[i].bytes; });
    column<int64_t>(out, "f", rows, [&](size_t i) { return spans[i].flops; });
    column<int64_t>(out, "a", rows, [&](size_t i) { return assembly.id(spans[i].assembly); });
    column<int64_t>(out, "nt", rows, [&](size_t i) { return notes.id(spans[i].note); });
    if (dma) {
      column<int64_t>(out, "bp", rows, [&](size_t i) { return spans[i].bytesPerPartition; });
      column<double>(out, "pk", rows,
                     [&](size_t i) { return transferPeakGbps(spans[i], model.machine); });
    }
    out.endObject();
  }
  out.endArray().key("counters").beginArray();
  for (const CounterSeries& series : model.counters) {
    out.beginObject().field("name", series.name);
    out.key("t").beginArray();
    for (const auto& [ns, value] : series.points) out.value(ns);
    out.endArray().key("v").beginArray();
    for (const auto& [ns, value] : series.points) out.value(value);
    out.endArray().endObject();
  }
  out.endArray();
  opcodes.write(out, "opcodes");
  causes.write(out, "causes");
  semaphores.write(out, "semaphores");
  assembly.write(out, "asm");
  notes.write(out, "notes");
  out.endObject();
  std::string text = out.take();
  escapeScriptEnd(text);
  return text;
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
