// Chrome trace-event JSON writer (streamed).
#include "traces/chrome_trace.h"

#include "isa/file_write.h"
#include "traces/json_writer.h"
#include "traces/semaphore_releases.h"
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
  TraceWriter(const std::string& path, const isa::Program& program, const EventLog& log,
              const MachineFacts& machine)
      : out_(path),
        program_(program),
        log_(log),
        machine_(machine),
        layout_(layoutTracks(log)),
        releases_(semaphoreReleases(program, log, machine)) {}

  void write(const nlohmann::json& givenSummary) {
    const nlohmann::json summary =
        givenSummary.is_object() ? givenSummary : nlohmann::json::object();
    out_.beginObject().key("traceEvents").beginArray(true);
    writeMetadata();
    writeKernelSpan(summary);
    buildIndex();
    for (size_t i = 0; i < log_.instructions.size(); ++i) writeInstruction(i);
    for (size_t i = 0; i < log_.dmas.size(); ++i) writeDma(i);
    for (const auto& c : log_.counters) writeCounter(c);
    out_.endArray().field("displayTimeUnit", "ns").key("neuronsim").json(extras(summary).dump());
    out_.endObject();
    out_.close();
  }

 private:
  /// Opens an event object with its phase, pid and tid.
  void beginEvent(const char* ph, int tid) {
    out_.beginObject().field("ph", ph).field("pid", 1);
    if (tid >= 0) out_.field("tid", tid);
  }

  void threadMeta(int tid, const std::string& name, int sortIndex) {
    beginEvent("M", tid);
    out_.field("name", "thread_name")
        .key("args")
        .beginObject()
        .field("name", name)
        .endObject()
        .endObject();
    beginEvent("M", tid);
    out_.field("name", "thread_sort_index")
        .key("args")
        .beginObject()
        .field("sort_index", sortIndex)
        .endObject();
    out_.endObject();
  }

  void writeMetadata() {
    beginEvent("M", -1);
    out_.field("name", "process_name")
        .key("args")
        .beginObject()
        .field("name", "NeuronCore")
        .endObject()
        .endObject();
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
    const double total = summary.value("total_ns", 0.0);
    beginEvent("X", kKernelTid);
    out_.field("cat", "kernel").field("name", summary.value("kernel", std::string("kernel")));
    out_.field("ts", 0).field("dur", us(total));
    out_.key("args").beginObject().field("total_ns", total).endObject().endObject();
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

  const isa::Instruction* instruction(int64_t index) const {
    return index >= 0 && static_cast<size_t>(index) < program_.instructions.size()
               ? &program_.instructions[static_cast<size_t>(index)]
               : nullptr;
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
    const int64_t id = ++flowId_;
    beginEvent("s", fromTid);
    out_.field("cat", cat).field("name", cat).field("id", id).field("ts", us(fromNs)).endObject();
    beginEvent("f", toTid);
    out_.field("bp", "e")
        .field("cat", cat)
        .field("name", cat)
        .field("id", id)
        .field("ts", us(toNs))
        .endObject();
  }

  void writeInstruction(size_t i) {
    const InstructionEvent& e = log_.instructions[i];
    const int tid = layout_.instructionTids[i];
    const std::string_view opcode = isa::opcodeName(e.opcode);
    beginEvent("X", tid);
    out_.field("cat", "instruction")
        .field("name", opcode)
        .field("ts", us(e.start.ns()))
        .field("dur", us(e.end.ns() - e.start.ns()));
    out_.key("args").beginObject();
    out_.field("index", e.index).field("engine", isa::engineName(e.engine)).field("opcode", opcode);
    out_.field("asm", assembly(e.index, e.opcode));
    if (const isa::Instruction* inst = instruction(e.index); inst && !inst->note.empty())
      out_.field("note", inst->note);
    out_.field("cycles", e.cycles)
        .field("bytes_read", e.bytesRead)
        .field("bytes_written", e.bytesWritten);
    out_.field("flops", e.flops)
        .field("ready_ns", e.ready.ns())
        .field("start_ns", e.start.ns())
        .field("end_ns", e.end.ns());
    out_.field("stall_ns", std::max(0.0, e.start.ns() - e.ready.ns()))
        .field("stall_cause", stallCauseName(e.stall));
    if (e.waitSemaphore >= 0)
      out_.field("semaphore", semaphoreLabel(program_, e.waitSemaphore))
          .field("wait_value", e.waitValue);
    if (e.waitedOnInstruction >= 0) out_.field("waited_on", e.waitedOnInstruction);
    out_.key("released_by").beginArray();
    for (const Release& r : releases_[i]) out_.value(r.producer);
    out_.endArray().key("release_ns").beginArray();
    for (const Release& r : releases_[i]) out_.value(r.ns);
    out_.endArray().endObject().endObject();
    int fromTid = 0;
    double fromNs = 0;
    if (e.waitedOnInstruction >= 0 && flowSource(e.waitedOnInstruction, fromTid, fromNs))
      writeFlow("semaphore", fromTid, fromNs, tid, middle(e.start.ns(), e.end.ns()));
  }

  void writeDma(size_t i) {
    const DmaEvent& d = log_.dmas[i];
    const int tid = layout_.dmaTids[i];
    const isa::Instruction* inst = instruction(d.index);
    const std::string_view opcode = isa::opcodeName(inst ? inst->opcode : isa::Opcode::DmaCopy);
    const double dur = d.end.ns() - d.start.ns();
    const bool triggered = d.index >= 0 && static_cast<size_t>(d.index) < instructionAt_.size() &&
                           instructionAt_[static_cast<size_t>(d.index)] >= 0;
    beginEvent("X", tid);
    out_.field("cat", "dma")
        .field("name", opcode)
        .field("ts", us(d.start.ns()))
        .field("dur", us(dur));
    out_.key("args")
        .beginObject()
        .field("index", d.index)
        .field("queue", d.queue)
        .field("opcode", opcode);
    if (!triggered)
      out_.field("asm", assembly(d.index, inst ? inst->opcode : isa::Opcode::DmaCopy));
    out_.field("bytes", d.bytes)
        .field("bytes_per_partition", d.bytes / dmaPartitionCount(program_, d.index));
    out_.field("descriptors", d.descriptors)
        .field("dma_engines", d.dmaEngines)
        .field("hbm_bytes", d.hbmBytes);
    out_.field("issue_ns", d.issue.ns())
        .field("start_ns", d.start.ns())
        .field("end_ns", d.end.ns());
    out_.field("latency_ns", std::max(0.0, d.start.ns() - d.issue.ns()));
    out_.field("gbps", dur > 0 ? static_cast<double>(d.bytes) / dur : 0.0).endObject().endObject();
    if (triggered) {
      const int64_t t = instructionAt_[static_cast<size_t>(d.index)];
      const InstructionEvent& trigger = log_.instructions[static_cast<size_t>(t)];
      writeFlow("dma_issue", layout_.instructionTids[static_cast<size_t>(t)],
                middle(trigger.start.ns(), trigger.end.ns()), tid,
                middle(d.start.ns(), d.end.ns()));
    }
  }

  void writeCounter(const CounterSample& c) {
    beginEvent("C", -1);
    out_.field("name", counterName(c.counter)).field("ts", us(c.at.ns()));
    out_.key("args").beginObject().field("value", c.value).endObject().endObject();
  }

  nlohmann::json extras(const nlohmann::json& summary) const {
    nlohmann::json extras;
    extras["format"] = 1;
    extras["summary"] = summary;
    extras["machine"] = machineFactsJson(machine_);
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
    return extras;
  }

  JsonWriter out_;
  const isa::Program& program_;
  const EventLog& log_;
  const MachineFacts& machine_;
  TrackLayout layout_;
  std::vector<std::vector<Release>> releases_;
  std::vector<int64_t> instructionAt_;
  std::vector<int64_t> dmaAt_;
  int64_t flowId_ = 0;
};

}  // namespace

void writeChromeTrace(const std::string& path, const isa::Program& program, const EventLog& log,
                      const nlohmann::json& summary, const MachineFacts& machine) {
  isa::writeAtomically(path, [&](const std::string& temporary) {
    TraceWriter(temporary, program, log, machine).write(summary);
  });
}

}  // namespace neuronsim::traces
