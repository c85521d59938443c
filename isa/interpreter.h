#pragma once
// The sequential reference interpreter: every instruction in builder order, no time.

#include "isa/memory_state.h"
#include "isa/program.h"

namespace neuronsim::isa {

/// Runs every instruction of `program` in order on `memory` (semaphores are ignored).
void interpret(const Program& program, MemoryState& memory);

}  // namespace neuronsim::isa
