#pragma once
// Which access patterns an instruction reads and writes, in one fixed slot order.

#include <string>

#include "isa/instruction.h"

namespace neuronsim::isa {

/// Operand slots: 0 dst, 1..n srcs, then bias, reduceDst, operand0.vec, operand1.vec, scale.vec
/// (n = srcs.size()). Matmul accumulation counts as a write only.
enum class OptionalOperand : int { Bias = 1, ReduceDst, Operand0, Operand1, Scale };

/// Calls fn(ap, slot, isWrite) for every operand the instruction has, in slot order.
template <typename Fn>
void forEachOperand(const Instruction& inst, Fn&& fn) {
  fn(inst.dst, 0, true);
  const int nsrc = static_cast<int>(inst.srcs.size());
  for (int i = 0; i < nsrc; ++i) fn(inst.srcs[static_cast<size_t>(i)], i + 1, false);
  if (inst.bias) fn(*inst.bias, nsrc + 1, false);
  if (inst.reduceDst) fn(*inst.reduceDst, nsrc + 2, true);
  if (inst.operand0.vec) fn(*inst.operand0.vec, nsrc + 3, false);
  if (inst.operand1.vec) fn(*inst.operand1.vec, nsrc + 4, false);
  if (inst.scale.vec) fn(*inst.scale.vec, nsrc + 5, false);
}

/// Operand `slot` of an instruction (see forEachOperand); null when absent.
const AccessPattern* operandAt(const Instruction& inst, int slot);
/// The assembly name of operand `slot`: dst, srcs[i], bias, reduce_dst, operand0, operand1, scale.
std::string operandName(const Instruction& inst, int slot);

}  // namespace neuronsim::isa
