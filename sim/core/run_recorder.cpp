// Totals and trace events of issued instructions.
#include "sim/core/run_recorder.h"

namespace neuronsim::sim {

RunRecorder::RunRecorder(const MachineConfig& machine, traces::EventSink* sink)
    : machine_(machine), sink_(sink) {}

void RunRecorder::emit(const DecodedInstruction& inst, const Issue& issue) {
  const ComputeCost& cost = inst.cost;
  traces::InstructionEvent e;
  e.index = inst.index;
  e.engine = inst.engine;
  e.opcode = inst.opcode;
  e.ready = issue.ready;
  e.start = issue.start;
  e.end = issue.end;
  e.stall = issue.stall.cause;
  e.waitSemaphore = issue.stall.sem;
  e.waitValue = issue.stall.value;
  e.waitedOnInstruction = issue.stall.by;
  e.cycles = issue.cycles.value;
  e.flops = cost.flops;
  e.bytesRead = inst.bytesRead;
  e.bytesWritten = inst.bytesWritten;
  sink_->instruction(e);
  if (inst.engine != isa::Engine::Tensor || issue.end <= issue.start) return;
  if (peStarted_ && issue.start > lastPeEnd_)
    sink_->counter({traces::Counter::PeUtilization, lastPeEnd_, 0});
  if (machine_.peThrottle)
    sink_->counter({traces::Counter::Throttle, issue.start, 100.0 * issue.throttleRate});
  const double peakFlops = machine_.peakBf16Flops() * 1e-9 * (issue.end - issue.start).ns();
  sink_->counter({traces::Counter::PeUtilization, issue.start,
                  100.0 * static_cast<double>(cost.flops) / peakFlops});
  peStarted_ = true;
  lastPeEnd_ = issue.end;
}

traces::RunTotals RunRecorder::finish() {
  if (sink_ && peStarted_) sink_->counter({traces::Counter::PeUtilization, lastPeEnd_, 0});
  peStarted_ = false;
  totals_.total = end_;
  return totals_;
}

}  // namespace neuronsim::sim
