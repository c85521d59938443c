// Shared run state: semaphores and signal delivery.
#include "sim/core/core_context.h"

namespace neuronsim::sim {

CoreContext::CoreContext(const isa::Program& program_, const MachineConfig& machine_,
                         isa::MemoryState* memory_, traces::EventSink* sink_, bool detectRaces)
    : program(program_),
      machine(machine_),
      memory(memory_),
      sink(sink_),
      semaphores(new Semaphore[program_.semaphores.size() + 1]),
      races(detectRaces ? std::make_unique<RaceDetector>(program_, machine_) : nullptr),
      arbiter(machine_.accessConflicts) {}

void CoreContext::signal(const isa::Instruction& inst, int64_t index, isa::SignalAt at, double ns,
                         const VectorClock* vc) {
  for (const isa::SemSignal& s : inst.signals) {
    if (s.at != at) continue;
    Semaphore& sem = semaphores[s.sem];
    sem.timeline.add(ns, s.delta, index, nowNs());
    if (races && vc) races->release(s.sem, ns, s.delta, *vc);
    sem.changed.notify();
  }
}

void CoreContext::fail(std::exception_ptr e) {
  if (error) return;
  error = e;
  sc_core::sc_stop();
}

}  // namespace neuronsim::sim
