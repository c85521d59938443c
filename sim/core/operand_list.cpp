// Operand enumeration with footprints and byte counts.
#include "sim/core/operand_list.h"

#include "isa/error.h"

namespace neuronsim::sim {

OperandTotals listOperands(const isa::Instruction& inst, bool boxes, Operand* out) {
  const size_t count = 1 + inst.srcs.size() + (inst.bias ? 1 : 0) + (inst.reduceDst ? 1 : 0) +
                       (inst.operand0.vec ? 1 : 0) + (inst.operand1.vec ? 1 : 0) +
                       (inst.scale.vec ? 1 : 0);
  if (count > kMaxOperands) throw Error("an instruction has more than 12 operands");
  OperandTotals totals;
  totals.count = count;
  isa::forEachOperand(inst, [&](const isa::AccessPattern& ap, int slot, bool write) {
    Operand& op = *out++;
    op.box = boxes ? isa::footprintOf(ap) : Footprint{};
    op.slot = static_cast<int8_t>(slot);
    op.write = write;
    const int64_t bytes = ap.numElements() * isa::dtypeBytes(ap.dtype);
    (write ? totals.bytesWritten : totals.bytesRead) += bytes;
    if (ap.space == isa::Space::Sbuf) {
      totals.usesSbuf = true;
      (write ? totals.sbufBytesWritten : totals.sbufBytesRead) += bytes;
    }
    if (ap.space == isa::Space::Psum) totals.usesPsum = true;
  });
  return totals;
}

}  // namespace neuronsim::sim
