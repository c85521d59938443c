#pragma once
// Every operand of one instruction with its footprint and size, computed once per issue and
// shared by the interlock, the port arbiter, the race detector, the totals and the trace.

#include <cstddef>
#include <cstdint>

#include "isa/instruction.h"
#include "isa/operands.h"
#include "sim/cost/operand_traits.h"
#include "sim/race/footprint.h"

namespace neuronsim::sim {

/// One operand of an instruction: its bounding box and where it sits (isa::operandAt(inst,
/// slot) gives its access pattern).
struct Operand {
  Footprint box;  ///< only when asked for (listOperands), else default
  int8_t slot;    ///< see isa::forEachOperand
  bool write;
};

/// What the timed model sums over an instruction's operands.
struct OperandTotals {
  size_t count = 0;  ///< operands written
  bool usesSbuf = false, usesPsum = false;
  int64_t bytesRead = 0, bytesWritten = 0, sbufBytesRead = 0, sbufBytesWritten = 0;
};

/// The most operands an instruction may have.
constexpr size_t kMaxOperands = 12;

/// Writes the operands of `inst` to out[0..count) in slot order (matmul accumulation counts as
/// a write only) with their boxes when `boxes` (footprints cost most of the work), else only
/// dst's (out[0]), and their shapes to shapes[0..count); throws when there are more than
/// kMaxOperands.
OperandTotals listOperands(const isa::Instruction& inst, bool boxes, Operand* out,
                           OperandShape* shapes);

}  // namespace neuronsim::sim
