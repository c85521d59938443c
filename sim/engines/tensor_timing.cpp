// LoadStationary and throttle on top of the TensorE issue time.
#include "sim/engines/tensor_timing.h"

#include <algorithm>

namespace neuronsim::sim {

using traces::StallCause;

TensorTiming::TensorTiming(const MachineConfig& machine)
    : EngineTiming(isa::Engine::Tensor, machine), throttle_(machine) {}

Issue TensorTiming::issue(const DecodedInstruction& inst, const Footprint&, Tick start,
                          const Stall& stall) {
  const ComputeCost& cost = inst.cost;
  Issue issue = begin(start, stall);
  // 1. LoadStationary when the stationary changes: in the background of the previous matmul
  //    when this instruction was already waiting at the head of the stream, else exposed
  //    inside this instruction's span (P1).
  Tick multiply = start;
  if (inst.newStationary) {
    const bool waited = stall.cause != StallCause::None;
    const Tick loadFrom = !waited && lastMultiply_ >= Tick() ? lastMultiply_ : start;
    multiply = std::max(start, loadFrom + clock_.toTicks(cost.loadStationary));
  }
  lastMultiply_ = multiply;
  // 2. The throttle: at the ramp's rate the work ends at `end`; the PE runs it at full rate,
  //    held back for the difference (a Throttle stall unless it waited for something else).
  const Tick work = clock_.toTicks(cost.issue);
  throttle_.beginAt(multiply);
  const PeThrottle::Run run = throttle_.run(multiply, work);
  issue.throttleRate = run.rate;
  issue.end = run.end;
  const Tick heldBack = issue.end - multiply - work;
  if (heldBack > Tick()) {
    issue.start = start + heldBack;
    if (stall.cause == StallCause::None || stall.cause == StallCause::EngineBusy)
      issue.stall = {StallCause::Throttle, -1, 0, -1};
  }
  throttle_.recordBusy(issue.end - work, issue.end);
  issue.complete = issue.end + latency_;
  issue.cycles = cost.issue;
  head_ = issue.end;
  return issue;
}

}  // namespace neuronsim::sim
