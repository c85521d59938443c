#pragma once
// The machine facts a trace records (traces/ never links sim/, so the harness hands them over).

#include "sim/machine_config.h"
#include "traces/machine_facts.h"

namespace neuronsim::kernels {

/// `machine`'s name, every parameter by key, and each engine's pipeline latency in ns.
traces::MachineFacts traceMachine(const sim::MachineConfig& machine);

}  // namespace neuronsim::kernels
