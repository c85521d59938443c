// Operand enumeration with footprints and byte counts.
#include "sim/core/operand_list.h"

#include "isa/error.h"

namespace neuronsim::sim {

OperandList::OperandList(const isa::Instruction& inst) {
  add(inst.dst, 0, true);
  const int nsrc = static_cast<int>(inst.srcs.size());
  for (int i = 0; i < nsrc; ++i) add(inst.srcs[static_cast<size_t>(i)], i + 1, false);
  if (inst.bias) add(*inst.bias, nsrc + 1, false);
  if (inst.reduceDst) add(*inst.reduceDst, nsrc + 2, true);
  if (inst.operand0.vec) add(*inst.operand0.vec, nsrc + 3, false);
  if (inst.operand1.vec) add(*inst.operand1.vec, nsrc + 4, false);
  if (inst.scale.vec) add(*inst.scale.vec, nsrc + 5, false);
}

void OperandList::add(const isa::AccessPattern& ap, int slot, bool write) {
  if (size_ == kMax) throw Error("an instruction has more than 12 operands");
  Operand& op = operands_[size_++];
  op.ap = &ap;
  op.slot = static_cast<int8_t>(slot);
  op.write = write;
  const int64_t elementBytes = isa::dtypeBytes(ap.dtype);
  int64_t freeSize = 0;
  op.box = footprintOf(ap, elementBytes, &freeSize);
  op.bytes = ap.partitionCount * freeSize * elementBytes;
  (write ? bytesWritten_ : bytesRead_) += op.bytes;
  if (ap.space == isa::Space::Sbuf) {
    usesSbuf_ = true;
    (write ? sbufWritten_ : sbufRead_) += op.bytes;
  }
  if (ap.space == isa::Space::Psum) usesPsum_ = true;
}

const isa::AccessPattern* operandAt(const isa::Instruction& inst, int slot) {
  if (slot == 0) return &inst.dst;
  const int nsrc = static_cast<int>(inst.srcs.size());
  if (slot <= nsrc) return &inst.srcs[static_cast<size_t>(slot - 1)];
  switch (slot - nsrc) {
    case 1:
      return inst.bias ? &*inst.bias : nullptr;
    case 2:
      return inst.reduceDst ? &*inst.reduceDst : nullptr;
    case 3:
      return inst.operand0.vec ? &*inst.operand0.vec : nullptr;
    case 4:
      return inst.operand1.vec ? &*inst.operand1.vec : nullptr;
    case 5:
      return inst.scale.vec ? &*inst.scale.vec : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace neuronsim::sim
