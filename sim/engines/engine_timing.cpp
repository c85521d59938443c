// Issue timing of the Vector, Scalar, GpSimd and Sync streams, and the factory.
#include "sim/engines/engine_timing.h"

#include "sim/engines/tensor_timing.h"

namespace neuronsim::sim {

EngineTiming::EngineTiming(isa::Engine engine, const MachineConfig& machine)
    : clock_(engineClock(engine, machine)),
      latency_(clock_.toTicks(pipelineLatency(engine, machine))),
      interlock_(engine != isa::Engine::Tensor) {}

Tick EngineTiming::afterInFlight(std::span<const Operand> operands, Tick t, Stall& stall) {
  // Results land in issue order, and every later query starts at or after t: the ones landed
  // by t matter to no one any more.
  while (ringSize_ > 0 && ring_[ringHead_].lands <= t) {
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
  for (size_t i = 0; i < ringSize_; ++i) {
    const InFlight& f = ring_[(ringHead_ + i) % kRing];
    if (f.lands <= t) continue;
    for (const Operand& op : operands) {
      if (op.write || !boxesOverlap(op.box, f.dst)) continue;
      t = f.lands;
      stall = {traces::StallCause::EngineBusy, -1, 0, f.index};
      break;
    }
  }
  return t;
}

Issue EngineTiming::issue(const DecodedInstruction& inst, const Footprint& dst, Tick start,
                          const Stall& stall) {
  Issue issue = begin(start, stall);
  issue.end = start + clock_.toTicks(inst.cost.issue);
  issue.complete = issue.end + latency_;
  issue.cycles = inst.cost.issue;
  if (interlock_) pushInFlight({issue.complete, inst.index, dst});
  head_ = issue.end;
  return issue;
}

Issue EngineTiming::trigger(Tick start, Tick duration, const Stall& stall) {
  Issue issue = begin(start, stall);
  issue.end = start + duration;
  issue.complete = issue.end;
  issue.cycles = clock_.toCycles(duration);
  head_ = issue.end;
  return issue;
}

void EngineTiming::pushInFlight(const InFlight& entry) {
  while (ringSize_ > 0 && ring_[ringHead_].lands <= head_) {
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
  if (ringSize_ == kRing) {  // deeper than modelled: forget the oldest
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
  ring_[(ringHead_ + ringSize_) % kRing] = entry;
  ++ringSize_;
}

std::unique_ptr<EngineTiming> makeEngineTiming(isa::Engine engine, const MachineConfig& machine) {
  switch (engine) {
    case isa::Engine::Tensor:
      return std::make_unique<TensorTiming>(machine);
    case isa::Engine::Vector:
    case isa::Engine::Scalar:
    case isa::Engine::GpSimd:
    case isa::Engine::Sync:
      return std::make_unique<EngineTiming>(engine, machine);
  }
  return std::make_unique<EngineTiming>(engine, machine);
}

}  // namespace neuronsim::sim
