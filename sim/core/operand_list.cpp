// Operand enumeration with footprints and byte counts.
#include "sim/core/operand_list.h"

#include "isa/error.h"

namespace neuronsim::sim {

OperandList::OperandList(const isa::Instruction& inst) {
  isa::forEachOperand(
      inst, [&](const isa::AccessPattern& ap, int slot, bool write) { add(ap, slot, write); });
}

void OperandList::add(const isa::AccessPattern& ap, int slot, bool write) {
  if (size_ == kMax) throw Error("an instruction has more than 12 operands");
  Operand& op = operands_[size_++];
  op.box = isa::footprintOf(ap);
  op.slot = static_cast<int8_t>(slot);
  op.write = write;
  const int64_t bytes = ap.numElements() * isa::dtypeBytes(ap.dtype);
  (write ? bytesWritten_ : bytesRead_) += bytes;
  if (ap.space == isa::Space::Sbuf) {
    usesSbuf_ = true;
    (write ? sbufWritten_ : sbufRead_) += bytes;
  }
  if (ap.space == isa::Space::Psum) usesPsum_ = true;
}

}  // namespace neuronsim::sim
