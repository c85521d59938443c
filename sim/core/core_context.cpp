// Shared run state: construction and failure (signal delivery is inline in the header).
#include "sim/core/core_context.h"

namespace neuronsim::sim {

CoreContext::CoreContext(const isa::Program& program, const MachineConfig& machine,
                         const SemaphoreUsage& usage, uint32_t psumEngines,
                         isa::MemoryState* memory, traces::EventSink* sink, bool detectRaces)
    : program_(program),
      machine_(machine),
      memory_(memory),
      semaphores_(usage, machine),
      races_(detectRaces ? std::make_unique<RaceDetector>(program, machine, usage.signals)
                         : nullptr),
      arbiter_(machine.geometry.accessConflicts, machine.psumBankConflicts, psumEngines),
      recorder_(machine, sink) {}

void CoreContext::fail(std::exception_ptr e) {
  if (error_) return;
  error_ = e;
  sc_core::sc_stop();
}

}  // namespace neuronsim::sim
