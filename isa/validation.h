#pragma once
// Hardware rules a program must keep (reference sections 1.3 and 2.1).

#include "isa/geometry.h"
#include "isa/program.h"

namespace neuronsim::isa {

/// Throws neuronsim::Error naming the instruction (index and opcode), the operand and the
/// broken rule, for the first violation found.
void validateInstruction(const Program& program, int64_t index, const Geometry& geometry);
/// Validates tensors, semaphores and every instruction.
void validateProgram(const Program& program, const Geometry& geometry);

}  // namespace neuronsim::isa
