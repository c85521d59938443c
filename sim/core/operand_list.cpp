// Operand enumeration with footprints, shapes and byte counts.
#include "sim/core/operand_list.h"

#include "isa/error.h"

namespace neuronsim::sim {
namespace {

/// Lists one operand: one walk of its dims gives its shape, byte count and (kBoxes) box.
template <bool kBoxes>
[[gnu::always_inline]] inline void listOne(const isa::AccessPattern& ap, int slot, bool write,
                                           Operand& op, OperandShape& shape,
                                           OperandTotals& totals) {
  isa::Reach reach;
  shape = walkDims<kBoxes>(ap, reach);
  if constexpr (kBoxes)
    op.box = isa::footprintFromReach(ap, reach);
  else
    op.box = Footprint{};
  op.slot = static_cast<int8_t>(slot);
  op.write = write;
  const int64_t bytes =
      static_cast<int64_t>(ap.partitionCount) * shape.freeSize * isa::dtypeBytes(ap.dtype);
  (write ? totals.bytesWritten : totals.bytesRead) += bytes;
  if (ap.space == isa::Space::Sbuf) {
    totals.usesSbuf = true;
    (write ? totals.sbufBytesWritten : totals.sbufBytesRead) += bytes;
  }
  if (ap.space == isa::Space::Psum) totals.usesPsum = true;
}

template <bool kBoxes>
OperandTotals listAll(const isa::Instruction& inst, Operand* out, OperandShape* shapes) {
  // dst and the five optional operands leave room for kMaxOperands - 6 srcs; only an
  // instruction with more needs its operands counted before they are written.
  if (inst.srcs.size() > kMaxOperands - 6) [[unlikely]] {
    const size_t count = 1 + inst.srcs.size() + (inst.bias ? 1 : 0) + (inst.reduceDst ? 1 : 0) +
                         (inst.operand0.vec ? 1 : 0) + (inst.operand1.vec ? 1 : 0) +
                         (inst.scale.vec ? 1 : 0);
    if (count > kMaxOperands) throw Error("an instruction has more than 12 operands");
  }
  OperandTotals totals;
  Operand unread;  // without boxes only dst's record is read
  isa::forEachOperand(inst, [&](const isa::AccessPattern& ap, int slot, bool write) {
    Operand& op = kBoxes || totals.count == 0 ? out[totals.count] : unread;
    listOne<kBoxes>(ap, slot, write, op, shapes[totals.count], totals);
    ++totals.count;
  });
  return totals;
}

}  // namespace

OperandTotals listOperands(const isa::Instruction& inst, bool boxes, Operand* out,
                           OperandShape* shapes) {
  return boxes ? listAll<true>(inst, out, shapes) : listAll<false>(inst, out, shapes);
}

}  // namespace neuronsim::sim
