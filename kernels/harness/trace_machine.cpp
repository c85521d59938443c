// Machine facts for traces, from the resolved machine config and the cost model.
#include "kernels/harness/trace_machine.h"

#include "sim/cost/clock.h"
#include "sim/cost/compute_cost.h"

namespace neuronsim::kernels {

traces::MachineFacts traceMachine(const sim::MachineConfig& machine) {
  traces::MachineFacts facts;
  facts.name = machine.name;
  facts.params = sim::machineParameterValues(machine);
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<isa::Engine>(e);
    facts.pipelineLatencyNs[static_cast<size_t>(e)] =
        sim::engineClock(engine, machine).toTicks(sim::pipelineLatency(engine, machine)).ns();
  }
  facts.semaphoreHandoffNs =
      sim::EngineClock(machine.syncGhz).toTicks(sim::Cycles{machine.semaphoreHandoffCycles}).ns();
  return facts;
}

}  // namespace neuronsim::kernels
