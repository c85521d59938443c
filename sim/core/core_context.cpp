// Shared run state: signal delivery to the semaphores, the race detector and waiting agents.
#include "sim/core/core_context.h"

namespace neuronsim::sim {

CoreContext::CoreContext(const isa::Program& program, const MachineConfig& machine,
                         const SemaphoreUsage& usage, isa::MemoryState* memory,
                         traces::EventSink* sink, bool detectRaces)
    : program_(program),
      machine_(machine),
      memory_(memory),
      semaphores_(usage, machine),
      races_(detectRaces ? std::make_unique<RaceDetector>(program, machine, usage.signals)
                         : nullptr),
      arbiter_(machine.accessConflicts),
      recorder_(machine, sink) {}

void CoreContext::signal(const isa::Instruction& inst, int64_t index, isa::SignalAt at,
                         Tick visible, const VectorClock* vc) {
  for (const isa::SemSignal& s : inst.signals) {
    if (s.at != at) continue;
    uint32_t woken = semaphores_.add(s.sem, visible, s.delta, index);
    if (races_ && vc) races_->release(s.sem, visible, s.delta, *vc);
    for (; woken != 0; woken &= woken - 1)
      wake_[static_cast<size_t>(__builtin_ctz(woken))].notify();
  }
}

void CoreContext::fail(std::exception_ptr e) {
  if (error_) return;
  error_ = e;
  sc_core::sc_stop();
}

}  // namespace neuronsim::sim
