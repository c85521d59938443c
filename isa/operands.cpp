// Operand slots of an instruction by index, and their names.
#include "isa/operands.h"

#include <fmt/format.h>

namespace neuronsim::isa {

const AccessPattern* operandAt(const Instruction& inst, int slot) {
  if (slot == 0) return &inst.dst;
  const int nsrc = static_cast<int>(inst.srcs.size());
  if (slot < 0) return nullptr;
  if (slot <= nsrc) return &inst.srcs[static_cast<size_t>(slot - 1)];
  auto vec = [](const HeapOptional<AccessPattern>& ap) { return ap ? &*ap : nullptr; };
  switch (static_cast<OptionalOperand>(slot - nsrc)) {
    case OptionalOperand::Bias:
      return vec(inst.bias);
    case OptionalOperand::ReduceDst:
      return vec(inst.reduceDst);
    case OptionalOperand::Operand0:
      return vec(inst.operand0.vec);
    case OptionalOperand::Operand1:
      return vec(inst.operand1.vec);
    case OptionalOperand::Scale:
      return vec(inst.scale.vec);
  }
  return nullptr;
}

std::string operandName(const Instruction& inst, int slot) {
  if (slot == 0) return "dst";
  const int nsrc = static_cast<int>(inst.srcs.size());
  if (slot > 0 && slot <= nsrc) return fmt::format("srcs[{}]", slot - 1);
  switch (static_cast<OptionalOperand>(slot - nsrc)) {
    case OptionalOperand::Bias:
      return "bias";
    case OptionalOperand::ReduceDst:
      return "reduce_dst";
    case OptionalOperand::Operand0:
      return "operand0";
    case OptionalOperand::Operand1:
      return "operand1";
    case OptionalOperand::Scale:
      return "scale";
  }
  return fmt::format("operand {}", slot);
}

}  // namespace neuronsim::isa
