#pragma once
// What a run leaves behind: the totals every run keeps, and the events and counters sent to
// the sink when tracing (nothing is built when there is no sink).

#include <algorithm>
#include <array>
#include <cstdint>

#include "isa/instruction.h"
#include "sim/engines/issue.h"
#include "sim/engines/stream_decoder.h"
#include "sim/machine_config.h"
#include "traces/event.h"
#include "traces/summary.h"

namespace neuronsim::sim {

class RunRecorder {
 public:
  RunRecorder(const MachineConfig& machine, traces::EventSink* sink);

  traces::EventSink* sink() const { return sink_; }
  traces::RunTotals& totals() { return totals_; }
  /// Counts one issued instruction (compute or DMA trigger) and, when tracing, emits it
  /// with the TensorE utilization and throttle counters.
  void instruction(const DecodedInstruction& inst, const Issue& issue) {
    const ComputeCost& cost = inst.cost;
    traces::EngineTotals& engine = totals_.engines[static_cast<size_t>(inst.engine)];
    engine.busy += issue.end - issue.start;
    Tick& activeUntil = activeUntil_[static_cast<size_t>(inst.engine)];
    const Tick activeFrom = std::max(issue.executing, activeUntil);
    if (issue.complete > activeFrom) engine.active += issue.complete - activeFrom;
    activeUntil = std::max(activeUntil, issue.complete);
    ++engine.instructions;
    ++totals_.instructions;
    totals_.flops += cost.flops;
    totals_.transposeFlops += cost.transposeFlops;
    if (!inst.dma) {
      totals_.sbufReadBytes += inst.sbufBytesRead;
      totals_.sbufWriteBytes += inst.sbufBytesWritten;
    }
    noteEnd(issue.complete);
    if (sink_) emit(inst, issue);
  }
  /// Something of the run lasts until `t`.
  void noteEnd(Tick t) { end_ = std::max(end_, t); }
  /// Closes the counters and returns the totals (total = the last time noted).
  traces::RunTotals finish();

 private:
  /// Sends `inst`'s event and TensorE counters to the sink.
  void emit(const DecodedInstruction& inst, const Issue& issue);

  const MachineConfig& machine_;
  traces::EventSink* sink_;
  traces::RunTotals totals_;
  Tick end_;
  std::array<Tick, isa::kNumEngines> activeUntil_{};  ///< end of each engine's active union so far
  bool peStarted_ = false;
  Tick lastPeEnd_;
};

}  // namespace neuronsim::sim
