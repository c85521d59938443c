#pragma once
// A run's trace as flat records (spans, counters, tracks), built from a saved trace or a live log.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/machine_facts.h"
#include "traces/semaphore_releases.h"

namespace neuronsim::traces {

/// One instruction or DMA transfer as the report, diff, csv and viewer see it. Times in ns.
struct Span {
  bool isDma = false;
  int64_t index = -1;  ///< position in Program::instructions
  int tid = 0;         ///< trace track (see track_layout.h)
  std::string track;   ///< base track without lane: "tensor", "dma.q3"
  std::string opcode;
  double readyNs = 0;  ///< instruction: reached the head of its stream; DMA: issued
  double startNs = 0;
  double endNs = 0;
  double stallNs = 0;  ///< instruction: start - ready; DMA: start - issue (latency and queueing)
  std::string stallCause = "none";
  std::string semaphore;  ///< the semaphore that held it, if any
  int64_t waitValue = 0;
  int64_t waitedOn = -1;  ///< the instruction whose signal released it
  /// Instruction: every wait's releasing instruction and time, in wait order (traces written
  /// before this was recorded have none: waitsKnown is false).
  std::vector<Release> waits;
  bool waitsKnown = false;
  int64_t cycles = 0;
  int64_t bytes = 0;  ///< instruction: read + written; DMA: transferred
  int64_t flops = 0;
  int64_t bytesPerPartition = 0;  ///< DMA only
  int64_t hbmBytes = 0;           ///< DMA only: bytes read from or written to HBM
  int32_t dmaEngines = 0;         ///< DMA only: DMA engines that carried it
  std::string assembly;
  std::string note;  ///< the builder's note (kernel phase), also on a DMA's transfer
};

/// One sampled counter of a trace.
struct CounterSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (ns, value), a step function
};

/// Everything report, diff, csv and view need from one trace.
struct TraceModel {
  nlohmann::json summary;
  std::vector<Span> spans;  ///< instructions then DMA transfers, each group in trace order
  std::vector<CounterSeries> counters;
  std::vector<std::pair<int, std::string>> tracks;  ///< (tid, name), kernel track excluded
  std::vector<std::pair<int64_t, std::string>> uninitializedReads;
  MachineFacts machine;   ///< unknown (empty name) for traces that did not record it
  double minStartNs = 0;  ///< over every complete event, the kernel span included
  double maxEndNs = 0;
};

/// Reads the trace file `path` (streamed, never held as JSON): the one reader of traces, the only
/// place their rules are checked. Throws neuronsim::Error naming the file when it cannot be read,
/// is not JSON, has no traceEvents array or no neuronsim section, or holds a malformed event.
TraceModel loadTraceModel(const std::string& path);
/// The same model from a trace already parsed into a DOM whose top level is valid (the tests'
/// oracle for the streaming reader); throws neuronsim::Error on a malformed event.
TraceModel traceModel(const nlohmann::json& trace);
/// The same records straight from a run (no kernel span; summary left empty). `machine` gives
/// the pipeline latencies that time each wait's release.
TraceModel traceModel(const isa::Program& program, const EventLog& log,
                      const MachineFacts& machine = {});

/// Display name of semaphore `sem`: its declared name, else "S[n]"; "" for -1.
std::string semaphoreLabel(const isa::Program& program, int32_t sem);
/// Partitions (rows) a DMA spreads over: the on-chip side's partition count, else the
/// destination's.
int64_t dmaPartitionCount(const isa::Program& program, int64_t index);
/// isa::printInstruction of instruction `index`, or the opcode name when it cannot be printed.
std::string assemblyText(const isa::Program& program, int64_t index, isa::Opcode opcode);

}  // namespace neuronsim::traces
