#pragma once
// Hardware rules a program must keep (reference sections 1.3 and 2.1).

#include <cstdint>

#include "isa/geometry.h"
#include "isa/program.h"

namespace neuronsim::isa {

/// An access of at most this many partitions starts at a multiple of it: 0, 32, 64 or 96 (A1).
inline constexpr int32_t kQuadrantPartitions = 32;

/// nc_matmul and TensorE transpose limits come from the geometry's PE array (maxContraction,
/// maxStationaryFree, maxMovingFree). Throws neuronsim::Error naming the instruction (index and
/// opcode), the operand and the broken rule, for the first violation found.
void validateInstruction(const Program& program, int64_t index, const Geometry& geometry);
/// Validates tensors, semaphores and every instruction.
void validateProgram(const Program& program, const Geometry& geometry);

}  // namespace neuronsim::isa
