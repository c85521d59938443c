#pragma once
// Which signal released each semaphore wait of a run, rebuilt from the program and event times
// the way the simulator counts semaphores (increments land in time order; a wait for value v is
// released by the increment that first brings the count to v).

#include <cstdint>
#include <vector>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/machine_facts.h"

namespace neuronsim::traces {

/// One wait of an instruction and the increment that satisfied it.
struct Release {
  int64_t producer = -1;  ///< instruction whose signal reached the value; -1 when none was needed
  double ns = 0;          ///< when the count reached the value
};

/// Per event of `log.instructions` (same order), one Release per wait of its instruction, in the
/// instruction's wait order. A signal lands at: Read, the instruction's start (a DMA: its
/// transfer's first byte); Complete, its end plus the engine's pipeline latency (a DMA: when its
/// queue signals the transfer landed); a compute engine's signal one semaphore handoff later.
std::vector<std::vector<Release>> semaphoreReleases(const isa::Program& program,
                                                    const EventLog& log,
                                                    const MachineFacts& machine);

}  // namespace neuronsim::traces
