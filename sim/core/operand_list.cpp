// Operand enumeration with footprints and byte counts.
#include "sim/core/operand_list.h"

#include <new>

#include "isa/error.h"

namespace neuronsim::sim {

OperandList::OperandList(const isa::Instruction& inst) {
  isa::forEachOperand(
      inst, [&](const isa::AccessPattern& ap, int slot, bool write) { add(ap, slot, write); });
}

void OperandList::add(const isa::AccessPattern& ap, int slot, bool write) {
  if (size_ == kMax) throw Error("an instruction has more than 12 operands");
  new (&storage_.operands[size_++]) Operand{isa::footprintOf(ap), static_cast<int8_t>(slot), write};
  const int64_t bytes = ap.numElements() * isa::dtypeBytes(ap.dtype);
  (write ? bytesWritten_ : bytesRead_) += bytes;
  if (ap.space == isa::Space::Sbuf) {
    usesSbuf_ = true;
    (write ? sbufWritten_ : sbufRead_) += bytes;
  }
  if (ap.space == isa::Space::Psum) usesPsum_ = true;
}

}  // namespace neuronsim::sim
