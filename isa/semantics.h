#pragma once
// Functional semantics of every opcode; shared by the interpreter and the timed model.

#include <cstdint>

#include "isa/instruction.h"
#include "isa/memory_state.h"

namespace neuronsim::isa {

/// Applies `inst` to `memory`. `index` is the instruction's position in the program, used
/// to attribute uninitialized reads. Assumes the program was validated.
void execute(const Instruction& inst, int64_t index, MemoryState& memory);

}  // namespace neuronsim::isa
