// Flat trace records from a saved Chrome trace or from an EventLog.
#include "traces/trace_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/size_limits.h"
#include "traces/flat_event.h"
#include "traces/trace_sax.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

std::string baseTrack(int tid) {
  return trackName(tid % kLaneTidStride);
}

Span spanFromEvent(const FlatEvent& event, bool isDma) {
  Span s;
  s.isDma = isDma;
  s.tid = static_cast<int>(event.number("tid", 0));
  s.track = baseTrack(s.tid);
  s.opcode = event.argText("opcode", event.text("name", "?"));
  s.index = event.argInteger("index", -1);
  const double ts = event.number("ts", 0) * 1000.0;
  const double dur = event.number("dur", 0) * 1000.0;
  s.startNs = event.argNumber("start_ns", ts);
  s.endNs = event.argNumber("end_ns", ts + dur);
  s.cycles = event.argInteger("cycles", 0);
  s.flops = event.argInteger("flops", 0);
  s.assembly = event.argText("asm", isDma ? "" : s.opcode);
  s.note = event.argText("note", "");
  if (isDma) {
    s.readyNs = event.argNumber("issue_ns", s.startNs);
    s.stallNs = std::max(0.0, s.startNs - s.readyNs);
    s.stallCause = s.stallNs > 0 ? "dma_latency" : "none";
    s.bytes = event.argInteger("bytes", 0);
    s.bytesPerPartition = event.argInteger("bytes_per_partition", s.bytes);
    s.hbmBytes = event.argInteger("hbm_bytes", 0);
    s.dmaEngines = static_cast<int32_t>(event.argInteger("dma_engines", 0));
  } else {
    s.readyNs = event.argNumber("ready_ns", s.startNs);
    s.stallNs = event.argNumber("stall_ns", std::max(0.0, s.startNs - s.readyNs));
    s.stallCause = event.argText("stall_cause", "none");
    s.semaphore = event.argText("semaphore", "");
    s.waitValue = event.argInteger("wait_value", 0);
    s.waitedOn = event.argInteger("waited_on", -1);
    s.bytes = event.argInteger("bytes_read", 0) + event.argInteger("bytes_written", 0);
    const std::vector<double>* by = event.argList("released_by");
    const std::vector<double>* at = event.argList("release_ns");
    if (by && at && by->size() == at->size()) {
      s.waitsKnown = true;
      for (size_t k = 0; k < by->size(); ++k)
        s.waits.push_back({static_cast<int64_t>((*by)[k]), (*at)[k]});
    }
  }
  return s;
}

}  // namespace

std::string semaphoreLabel(const isa::Program& program, int32_t sem) {
  if (sem < 0) return "";
  const auto i = static_cast<size_t>(sem);
  if (i < program.semaphores.size() && !program.semaphores[i].empty()) return program.semaphores[i];
  return fmt::format("S[{}]", sem);
}

int64_t dmaPartitionCount(const isa::Program& program, int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= program.instructions.size()) return 1;
  const auto& inst = program.instructions[static_cast<size_t>(index)];
  if (inst.dst.space != isa::Space::Hbm || inst.srcs.empty())
    return std::max<int64_t>(1, inst.dst.partitionCount);
  return std::max<int64_t>(1, inst.srcs[0].partitionCount);
}

std::string assemblyText(const isa::Program& program, int64_t index, isa::Opcode opcode) {
  if (index < 0 || static_cast<size_t>(index) >= program.instructions.size())
    return std::string(isa::opcodeName(opcode));
  try {
    return isa::printInstruction(program, program.instructions[static_cast<size_t>(index)]);
  } catch (const std::exception&) {
    return std::string(isa::opcodeName(opcode));
  }
}

namespace {

/// Accumulates trace events one at a time (so a big file never sits in memory as a DOM).
class ModelBuilder {
 public:
  void addEvent(const FlatEvent& event) {
    const std::string ph = event.text("ph", "");
    if (ph == "X") {
      if (!event.findField("ts"))
        throw Error(fmt::format("{} has a complete event without ts", source_));
      const double tid = event.number("tid", 0);
      if (!(tid >= std::numeric_limits<int>::min() && tid <= std::numeric_limits<int>::max()))
        throw Error(
            fmt::format("{} has a complete event with tid {} (a track id is a 32-bit integer)",
                        source_, nlohmann::json(tid).dump()));
      const double ts = event.number("ts", 0) * 1000.0;
      const double dur = event.number("dur", 0) * 1000.0;
      checkTime("ts", ts);
      checkTime("ts + dur", ts + dur);
      minStart_ = std::min(minStart_, ts);
      maxEnd_ = std::max(maxEnd_, ts + dur);
      const std::string cat = event.text("cat", "");
      if (cat == "instruction") model_.spans.push_back(checkedTimes(spanFromEvent(event, false)));
      if (cat == "dma") dmas_.push_back(checkedTimes(spanFromEvent(event, true)));
    } else if (ph == "C") {
      const std::string name = event.text("name", "");
      auto [it, added] = counterIndex_.emplace(name, model_.counters.size());
      if (added) model_.counters.push_back({name, {}});
      model_.counters[it->second].points.emplace_back(event.number("ts", 0) * 1000.0,
                                                      event.argNumber("value", 0));
    }
  }

  TraceModel finish(const nlohmann::json& extras) {
    model_.summary = extras.value("summary", nlohmann::json::object());
    if (!model_.summary.is_object()) model_.summary = nlohmann::json::object();
    std::unordered_map<int64_t, const Span*> triggerOf;
    for (const Span& s : model_.spans) triggerOf.emplace(s.index, &s);
    for (Span& d : dmas_)
      if (auto it = triggerOf.find(d.index); it != triggerOf.end()) {
        if (d.assembly.empty()) d.assembly = it->second->assembly;
        if (d.note.empty()) d.note = it->second->note;
      }
    for (Span& d : dmas_)
      if (d.assembly.empty()) d.assembly = d.opcode;
    model_.spans.insert(model_.spans.end(), std::make_move_iterator(dmas_.begin()),
                        std::make_move_iterator(dmas_.end()));
    if (minStart_ <= maxEnd_) {
      model_.minStartNs = minStart_;
      model_.maxEndNs = maxEnd_;
    }
    for (const SectionEntry& t : sectionList(extras, "tracks")) {
      const int64_t tid = t.integer("tid", 0);
      if (tid < std::numeric_limits<int>::min() || tid > std::numeric_limits<int>::max())
        t.fail("tid", "a 32-bit integer");
      if (tid != kKernelTid)
        model_.tracks.emplace_back(tid, t.text("name", trackName(static_cast<int>(tid))));
    }
    for (const SectionEntry& r : sectionList(extras, "uninitialized_reads"))
      model_.uninitializedReads.emplace_back(r.integer("index", -1), r.text("what", ""));
    model_.machine = machineFactsFrom(extras.value("machine", nlohmann::json()));
    return std::move(model_);
  }

  explicit ModelBuilder(std::string source) : source_(std::move(source)) {}

  /// Times beyond this (ns, 1000 s simulated) are refused, so picosecond ticks of any sum or
  /// difference of two of them fit in 64 bits.
  static constexpr double kMaxTimeNs = 1e12;

  void checkTime(const char* what, double ns) const {
    if (!(std::abs(ns) <= kMaxTimeNs))
      throw Error(
          fmt::format("{} has an event whose {} is {} ns (times must be finite and within "
                      "+-{:g} ns)",
                      source_, what, nlohmann::json(ns).dump(), kMaxTimeNs));
  }

  Span checkedTimes(Span s) const {
    checkTime("start", s.startNs);
    checkTime("end", s.endNs);
    checkTime("ready time", s.readyNs);
    checkTime("stall", s.stallNs);
    for (const Release& r : s.waits) checkTime("semaphore release time", r.ns);
    return s;
  }

 private:
  /// One entry of a list in the neuronsim section; a field of the wrong type is an Error.
  struct SectionEntry {
    const nlohmann::json& json;
    std::string where;  ///< "trace 'T': neuronsim.tracks[2]"

    [[noreturn]] void fail(const char* key, const std::string& rule) const {
      std::string shown = json[key].dump();
      if (shown.size() > 40) shown = fmt::format("{}...", shown.substr(0, 37));
      throw Error(fmt::format("{}.{} is {} (want {})", where, key, shown, rule));
    }
    int64_t integer(const char* key, int64_t fallback) const {
      if (!json.contains(key)) return fallback;
      if (!json[key].is_number_integer()) fail(key, "an integer");
      return json[key].get<int64_t>();
    }
    std::string text(const char* key, const std::string& fallback) const {
      if (!json.contains(key)) return fallback;
      if (!json[key].is_string()) fail(key, "a string");
      return json[key].get<std::string>();
    }
  };

  /// The entries of list `key` of the neuronsim section (none when absent), each an object.
  std::vector<SectionEntry> sectionList(const nlohmann::json& extras, const char* key) const {
    std::vector<SectionEntry> entries;
    if (!extras.contains(key)) return entries;
    const std::string where = fmt::format("{}: neuronsim.{}", source_, key);
    if (!extras[key].is_array()) throw Error(fmt::format("{} is not a list", where));
    for (size_t i = 0; i < extras[key].size(); ++i) {
      entries.push_back({extras[key][i], fmt::format("{}[{}]", where, i)});
      if (!entries.back().json.is_object())
        throw Error(fmt::format("{} is not an object", entries.back().where));
    }
    return entries;
  }

  std::string source_;
  TraceModel model_;
  std::vector<Span> dmas_;
  std::map<std::string, size_t> counterIndex_;
  double minStart_ = std::numeric_limits<double>::infinity();
  double maxEnd_ = -std::numeric_limits<double>::infinity();
};

/// What wrote the JSON file with top-level `keys` when it is another neuronsim output than a
/// trace ("a run summary (from --summary-json)"), or nullptr.
const char* otherNeuronsimFile(const std::set<std::string>& keys) {
  if (keys.count("total_ns") && keys.count("engines") && keys.count("roofline_ns"))
    return "a run summary (from --summary-json)";
  if (keys.count("sweep") && keys.count("results")) return "a sweep result (from sweep --json)";
  return nullptr;
}

}  // namespace

TraceModel traceModel(const nlohmann::json& trace) {
  ModelBuilder builder("trace");
  FlatEvent flat;
  for (const auto& event : trace.at("traceEvents")) {
    flat.assign(event);
    builder.addEvent(flat);
  }
  return builder.finish(trace.at("neuronsim"));
}

TraceModel loadTraceModel(const std::string& path) {
  const std::string text = isa::readTextFile(path, isa::kMaxTraceBytes, "trace");
  ModelBuilder builder(fmt::format("trace '{}'", path));
  const StreamedTrace trace =
      streamTrace(text, [&](const FlatEvent& event) { builder.addEvent(event); });
  if (!trace.valid) throw Error(fmt::format("trace '{}' is not valid JSON", path));
  if (!trace.isObject || !trace.hasEvents) {
    if (const char* written = otherNeuronsimFile(trace.topKeys))
      throw Error(fmt::format(
          "{} is {}, not a trace; write one with neuronsim run or asm ... --trace FILE.json", path,
          written));
    throw Error(fmt::format("trace '{}' has no traceEvents array (not a Chrome trace)", path));
  }
  if (!trace.neuronsim.is_object())
    throw Error(
        fmt::format("trace '{}' has no neuronsim section (not written by neuronsim run)", path));
  return builder.finish(trace.neuronsim);
}

TraceModel traceModel(const isa::Program& program, const EventLog& log,
                      const MachineFacts& machine) {
  TraceModel model;
  model.summary = nlohmann::json::object();
  model.machine = machine;
  const TrackLayout layout = layoutTracks(log);
  std::vector<std::vector<Release>> releases = semaphoreReleases(program, log, machine);
  double minStart = std::numeric_limits<double>::infinity(), maxEnd = -minStart;
  for (size_t i = 0; i < log.instructions.size(); ++i) {
    const InstructionEvent& e = log.instructions[i];
    Span s;
    s.index = e.index;
    s.tid = layout.instructionTids[i];
    s.track = baseTrack(s.tid);
    s.opcode = isa::opcodeName(e.opcode);
    s.readyNs = e.ready.ns();
    s.startNs = e.start.ns();
    s.endNs = e.end.ns();
    s.stallNs = std::max(0.0, e.start.ns() - e.ready.ns());
    s.stallCause = stallCauseName(e.stall);
    s.semaphore = semaphoreLabel(program, e.waitSemaphore);
    s.waitValue = e.waitSemaphore >= 0 ? e.waitValue : 0;
    s.waitedOn = e.waitedOnInstruction;
    s.cycles = e.cycles;
    s.bytes = e.bytesRead + e.bytesWritten;
    s.flops = e.flops;
    s.assembly = assemblyText(program, e.index, e.opcode);
    s.waits = std::move(releases[i]);
    s.waitsKnown = true;
    if (e.index >= 0 && static_cast<size_t>(e.index) < program.instructions.size())
      s.note = program.instructions[static_cast<size_t>(e.index)].note;
    minStart = std::min(minStart, s.startNs);
    maxEnd = std::max(maxEnd, s.endNs);
    model.spans.push_back(std::move(s));
  }
  std::vector<std::string> printed(program.instructions.size());
  for (const Span& s : model.spans)
    if (s.index >= 0 && static_cast<size_t>(s.index) < printed.size())
      printed[static_cast<size_t>(s.index)] = s.assembly;
  for (size_t i = 0; i < log.dmas.size(); ++i) {
    const DmaEvent& d = log.dmas[i];
    isa::Opcode opcode = isa::Opcode::DmaCopy;
    if (d.index >= 0 && static_cast<size_t>(d.index) < program.instructions.size())
      opcode = program.instructions[static_cast<size_t>(d.index)].opcode;
    Span s;
    s.isDma = true;
    s.index = d.index;
    s.tid = layout.dmaTids[i];
    s.track = baseTrack(s.tid);
    s.opcode = isa::opcodeName(opcode);
    s.readyNs = d.issue.ns();
    s.startNs = d.start.ns();
    s.endNs = d.end.ns();
    s.stallNs = std::max(0.0, d.start.ns() - d.issue.ns());
    s.stallCause = s.stallNs > 0 ? "dma_latency" : "none";
    s.bytes = d.bytes;
    s.bytesPerPartition = d.bytes / dmaPartitionCount(program, d.index);
    s.hbmBytes = d.hbmBytes;
    s.dmaEngines = d.dmaEngines;
    if (d.index >= 0 && static_cast<size_t>(d.index) < program.instructions.size())
      s.note = program.instructions[static_cast<size_t>(d.index)].note;
    s.assembly = d.index >= 0 && static_cast<size_t>(d.index) < printed.size() &&
                         !printed[static_cast<size_t>(d.index)].empty()
                     ? printed[static_cast<size_t>(d.index)]
                     : assemblyText(program, d.index, opcode);
    minStart = std::min(minStart, s.startNs);
    maxEnd = std::max(maxEnd, s.endNs);
    model.spans.push_back(std::move(s));
  }
  for (int tid : layout.usedTids) model.tracks.emplace_back(tid, trackName(tid));
  for (const auto& r : log.uninitializedReads)
    model.uninitializedReads.emplace_back(r.index, r.what);
  if (minStart <= maxEnd) {
    model.minStartNs = minStart;
    model.maxEndNs = maxEnd;
  }
  return model;
}

}  // namespace neuronsim::traces
