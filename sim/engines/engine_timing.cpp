// Issue timing of the Vector, Scalar, GpSimd and Sync streams, and the factory.
#include "sim/engines/engine_timing.h"

#include "sim/engines/tensor_timing.h"

namespace neuronsim::sim {

EngineTiming::EngineTiming(isa::Engine engine, const MachineConfig& machine)
    : clock_(engineClock(engine, machine)),
      latency_(clock_.toTicks(pipelineLatency(engine, machine))),
      interlock_(engine != isa::Engine::Tensor) {}

Issue EngineTiming::trigger(Tick start, Tick duration, const Stall& stall) {
  Issue issue = begin(start, stall);
  issue.end = start + duration;
  issue.complete = issue.end;
  issue.cycles = clock_.toCycles(duration);
  head_ = issue.end;
  return issue;
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
