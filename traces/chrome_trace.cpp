// Chrome trace-event JSON writer (streamed) and reader.
#include "traces/chrome_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/file_write.h"
#include "isa/size_limits.h"
#include "traces/json_writer.h"
#include "traces/trace_model.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

/// Microseconds from nanoseconds.
double us(double ns) {
  return ns / 1000.0;
}

/// Where a flow event binds to its slice: the middle, so it lies inside the slice whatever the
/// order a viewer sorts events of equal timestamp in.
double middle(double startNs, double endNs) {
  return startNs + (endNs - startNs) / 2;
}

/// Streams one run as trace events: metadata, kernel span, instructions, transfers, flows,
/// counters.
class TraceWriter {
 public:
  TraceWriter(const std::string& path, const isa::Program& program, const EventLog& log)
      : out_(path), program_(program), log_(log), layout_(layoutTracks(log)) {}

  void write(const nlohmann::json& givenSummary) {
    const nlohmann::json summary =
        givenSummary.is_object() ? givenSummary : nlohmann::json::object();
    out_.raw("{\"traceEvents\":[\n");
    writeMetadata();
    writeKernelSpan(summary);
    buildIndex();
    for (size_t i = 0; i < log_.instructions.size(); ++i) writeInstruction(i);
    for (size_t i = 0; i < log_.dmas.size(); ++i) writeDma(i);
    for (const auto& c : log_.counters) writeCounter(c);
    out_.raw("\n],\"displayTimeUnit\":\"ns\",\"neuronsim\":");
    writeExtras(summary);
    out_.raw("}\n");
    out_.close();
  }

 private:
  void begin() {
    out_.raw(first_ ? "" : ",\n");
    first_ = false;
  }

  void threadMeta(int tid, const std::string& name, int sortIndex) {
    begin();
    out_.raw("{\"ph\":\"M\",\"pid\":1,\"tid\":")
        .num(int64_t{tid})
        .raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
    out_.str(name).raw("}}");
    begin();
    out_.raw("{\"ph\":\"M\",\"pid\":1,\"tid\":").num(int64_t{tid});
    out_.raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":")
        .num(int64_t{sortIndex})
        .raw("}}");
  }

  void writeMetadata() {
    begin();
    out_.raw(
        "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"NeuronCore\"}}");
    threadMeta(kKernelTid, "kernel", 0);
    std::vector<int> tids;
    for (int e = 0; e < isa::kNumEngines; ++e)
      tids.push_back(engineTid(static_cast<isa::Engine>(e)));
    for (int tid : layout_.usedTids)
      if (tid >= kLaneTidStride || tid >= kDmaTidBase) tids.push_back(tid);
    for (int tid : tids) {
      int base = tid % kLaneTidStride, lane = tid / kLaneTidStride;
      threadMeta(tid, trackName(tid), base * 10 + lane);
    }
  }

  void writeKernelSpan(const nlohmann::json& summary) {
    double total = summary.value("total_ns", 0.0);
    begin();
    out_.raw("{\"ph\":\"X\",\"pid\":1,\"tid\":")
        .num(int64_t{kKernelTid})
        .raw(",\"cat\":\"kernel\",\"name\":");
    out_.str(summary.value("kernel", std::string("kernel")));
    out_.raw(",\"ts\":0,\"dur\":")
        .num(us(total))
        .raw(",\"args\":{\"total_ns\":")
        .num(total)
        .raw("}}");
  }

  void buildIndex() {
    size_t n = program_.instructions.size();
    for (const auto& e : log_.instructions) n = std::max(n, static_cast<size_t>(e.index + 1));
    for (const auto& d : log_.dmas) n = std::max(n, static_cast<size_t>(d.index + 1));
    instructionAt_.assign(n, -1);
    dmaAt_.assign(n, -1);
    for (size_t i = 0; i < log_.instructions.size(); ++i)
      if (log_.instructions[i].index >= 0)
        instructionAt_[static_cast<size_t>(log_.instructions[i].index)] = static_cast<int64_t>(i);
    for (size_t i = 0; i < log_.dmas.size(); ++i)
      if (log_.dmas[i].index >= 0)
        dmaAt_[static_cast<size_t>(log_.dmas[i].index)] = static_cast<int64_t>(i);
  }

  std::string assembly(int64_t index, isa::Opcode opcode) const {
    return assemblyText(program_, index, opcode);
  }

  /// Source (tid, ts inside the slice) of the flow that released an instruction waiting on `index`.
  bool flowSource(int64_t index, int& tid, double& tsNs) const {
    if (index < 0 || static_cast<size_t>(index) >= dmaAt_.size()) return false;
    if (int64_t d = dmaAt_[static_cast<size_t>(index)]; d >= 0) {
      tid = layout_.dmaTids[static_cast<size_t>(d)];
      tsNs = middle(log_.dmas[static_cast<size_t>(d)].start.ns(),
                    log_.dmas[static_cast<size_t>(d)].end.ns());
      return true;
    }
    if (int64_t i = instructionAt_[static_cast<size_t>(index)]; i >= 0) {
      tid = layout_.instructionTids[static_cast<size_t>(i)];
      tsNs = middle(log_.instructions[static_cast<size_t>(i)].start.ns(),
                    log_.instructions[static_cast<size_t>(i)].end.ns());
      return true;
    }
    return false;
  }

  void writeFlow(const char* cat, int fromTid, double fromNs, int toTid, double toNs) {
    int64_t id = ++flowId_;
    begin();
    out_.raw("{\"ph\":\"s\",\"pid\":1,\"tid\":").num(int64_t{fromTid}).raw(",\"cat\":\"").raw(cat);
    out_.raw("\",\"name\":\"")
        .raw(cat)
        .raw("\",\"id\":")
        .num(id)
        .raw(",\"ts\":")
        .num(us(fromNs))
        .raw("}");
    begin();
    out_.raw("{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":")
        .num(int64_t{toTid})
        .raw(",\"cat\":\"")
        .raw(cat);
    out_.raw("\",\"name\":\"")
        .raw(cat)
        .raw("\",\"id\":")
        .num(id)
        .raw(",\"ts\":")
        .num(us(toNs))
        .raw("}");
  }

  void writeInstruction(size_t i) {
    const InstructionEvent& e = log_.instructions[i];
    const int tid = layout_.instructionTids[i];
    begin();
    out_.raw("{\"ph\":\"X\",\"pid\":1,\"tid\":")
        .num(int64_t{tid})
        .raw(",\"cat\":\"instruction\",\"name\":\"");
    out_.raw(isa::opcodeName(e.opcode))
        .raw("\",\"ts\":")
        .num(us(e.start.ns()))
        .raw(",\"dur\":")
        .num(us(e.end.ns() - e.start.ns()));
    out_.raw(",\"args\":{\"index\":")
        .num(e.index)
        .raw(",\"engine\":\"")
        .raw(isa::engineName(e.engine));
    out_.raw("\",\"opcode\":\"")
        .raw(isa::opcodeName(e.opcode))
        .raw("\",\"asm\":")
        .str(assembly(e.index, e.opcode));
    out_.raw(",\"cycles\":").num(e.cycles).raw(",\"bytes_read\":").num(e.bytesRead);
    out_.raw(",\"bytes_written\":").num(e.bytesWritten).raw(",\"flops\":").num(e.flops);
    out_.raw(",\"ready_ns\":")
        .num(e.ready.ns())
        .raw(",\"start_ns\":")
        .num(e.start.ns())
        .raw(",\"end_ns\":")
        .num(e.end.ns());
    out_.raw(",\"stall_ns\":").num(std::max(0.0, e.start.ns() - e.ready.ns()));
    out_.raw(",\"stall_cause\":\"").raw(stallCauseName(e.stall)).raw("\"");
    if (e.waitSemaphore >= 0) {
      out_.raw(",\"semaphore\":")
          .str(semaphoreLabel(program_, e.waitSemaphore))
          .raw(",\"wait_value\":")
          .num(e.waitValue);
    }
    if (e.waitedOnInstruction >= 0) out_.raw(",\"waited_on\":").num(e.waitedOnInstruction);
    out_.raw("}}");
    int fromTid = 0;
    double fromNs = 0;
    if (e.waitedOnInstruction >= 0 && flowSource(e.waitedOnInstruction, fromTid, fromNs))
      writeFlow("semaphore", fromTid, fromNs, tid, middle(e.start.ns(), e.end.ns()));
  }

  void writeDma(size_t i) {
    const DmaEvent& d = log_.dmas[i];
    const int tid = layout_.dmaTids[i];
    isa::Opcode opcode = isa::Opcode::DmaCopy;
    if (d.index >= 0 && static_cast<size_t>(d.index) < program_.instructions.size())
      opcode = program_.instructions[static_cast<size_t>(d.index)].opcode;
    const double dur = d.end.ns() - d.start.ns();
    begin();
    out_.raw("{\"ph\":\"X\",\"pid\":1,\"tid\":")
        .num(int64_t{tid})
        .raw(",\"cat\":\"dma\",\"name\":\"");
    out_.raw(isa::opcodeName(opcode))
        .raw("\",\"ts\":")
        .num(us(d.start.ns()))
        .raw(",\"dur\":")
        .num(us(dur));
    out_.raw(",\"args\":{\"index\":").num(d.index).raw(",\"queue\":").num(int64_t{d.queue});
    out_.raw(",\"opcode\":\"").raw(isa::opcodeName(opcode)).raw("\"");
    if (d.index < 0 || static_cast<size_t>(d.index) >= instructionAt_.size() ||
        instructionAt_[static_cast<size_t>(d.index)] < 0)
      out_.raw(",\"asm\":").str(assembly(d.index, opcode));
    out_.raw(",\"bytes\":")
        .num(d.bytes)
        .raw(",\"bytes_per_partition\":")
        .num(d.bytes / dmaPartitionCount(program_, d.index));
    out_.raw(",\"descriptors\":")
        .num(int64_t{d.descriptors})
        .raw(",\"dma_engines\":")
        .num(int64_t{d.dmaEngines});
    out_.raw(",\"hbm_bytes\":").num(d.hbmBytes).raw(",\"issue_ns\":").num(d.issue.ns());
    out_.raw(",\"start_ns\":").num(d.start.ns()).raw(",\"end_ns\":").num(d.end.ns());
    out_.raw(",\"latency_ns\":").num(std::max(0.0, d.start.ns() - d.issue.ns()));
    out_.raw(",\"gbps\":").num(dur > 0 ? static_cast<double>(d.bytes) / dur : 0.0).raw("}}");
    if (d.index >= 0 && static_cast<size_t>(d.index) < instructionAt_.size()) {
      if (int64_t t = instructionAt_[static_cast<size_t>(d.index)]; t >= 0)
        writeFlow("dma_issue", layout_.instructionTids[static_cast<size_t>(t)],
                  middle(log_.instructions[static_cast<size_t>(t)].start.ns(),
                         log_.instructions[static_cast<size_t>(t)].end.ns()),
                  tid, middle(d.start.ns(), d.end.ns()));
    }
  }

  void writeCounter(const CounterSample& c) {
    begin();
    out_.raw("{\"ph\":\"C\",\"pid\":1,\"name\":\"")
        .raw(counterName(c.counter))
        .raw("\",\"ts\":")
        .num(us(c.at.ns()));
    out_.raw(",\"args\":{\"value\":").num(c.value).raw("}}");
  }

  void writeExtras(const nlohmann::json& summary) {
    nlohmann::json extras;
    extras["format"] = 1;
    extras["summary"] = summary;
    extras["semaphores"] = program_.semaphores;
    nlohmann::json tracks = nlohmann::json::array();
    tracks.push_back({{"tid", kKernelTid}, {"name", "kernel"}});
    for (int e = 0; e < isa::kNumEngines; ++e) {
      int tid = engineTid(static_cast<isa::Engine>(e));
      tracks.push_back({{"tid", tid}, {"name", trackName(tid)}});
    }
    for (int tid : layout_.usedTids)
      if (tid >= kLaneTidStride || tid >= kDmaTidBase)
        tracks.push_back({{"tid", tid}, {"name", trackName(tid)}});
    extras["tracks"] = tracks;
    nlohmann::json reads = nlohmann::json::array();
    for (const auto& r : log_.uninitializedReads)
      reads.push_back({{"index", r.index}, {"what", r.what}});
    extras["uninitialized_reads"] = reads;
    out_.raw(extras.dump());
  }

  JsonWriter out_;
  const isa::Program& program_;
  const EventLog& log_;
  TrackLayout layout_;
  std::vector<int64_t> instructionAt_;
  std::vector<int64_t> dmaAt_;
  int64_t flowId_ = 0;
  bool first_ = true;
};

}  // namespace

void writeChromeTrace(const std::string& path, const isa::Program& program, const EventLog& log,
                      const nlohmann::json& summary) {
  isa::writeAtomically(path, [&](const std::string& temporary) {
    TraceWriter(temporary, program, log).write(summary);
  });
}

nlohmann::json readTrace(const std::string& path) {
  const std::string text = isa::readTextFile(path, isa::kMaxTraceBytes, "trace");
  nlohmann::json trace = nlohmann::json::parse(text, nullptr, false);
  if (trace.is_discarded()) throw Error("trace '" + path + "' is not valid JSON");
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    throw Error("trace '" + path + "' has no traceEvents array (not a Chrome trace)");
  if (!trace.contains("neuronsim") || !trace["neuronsim"].is_object())
    throw Error("trace '" + path + "' has no neuronsim section (not written by neuronsim run)");
  return trace;
}

}  // namespace neuronsim::traces
