#pragma once
// Every operand of one instruction with its footprint and size, computed once per issue and
// shared by the interlock, the port arbiter, the race detector, the totals and the trace.

#include <cstdint>
#include <span>

#include "isa/instruction.h"
#include "isa/operands.h"
#include "sim/race/footprint.h"

namespace neuronsim::sim {

/// One operand of an instruction: its bounding box and where it sits (isa::operandAt(inst,
/// slot) gives its access pattern).
struct Operand {
  Footprint box;
  int8_t slot;  ///< see isa::forEachOperand
  bool write;
};

/// The operands of one instruction (matmul accumulation counts as a write only).
class OperandList {
 public:
  static constexpr size_t kMax = 12;
  explicit OperandList(const isa::Instruction& inst);

  const Operand* begin() const { return storage_.operands; }
  const Operand* end() const { return storage_.operands + size_; }
  std::span<const Operand> all() const { return {storage_.operands, size_}; }
  bool usesSbuf() const { return usesSbuf_; }
  bool usesPsum() const { return usesPsum_; }
  int64_t bytesRead() const { return bytesRead_; }
  int64_t bytesWritten() const { return bytesWritten_; }
  int64_t sbufBytesRead() const { return sbufRead_; }
  int64_t sbufBytesWritten() const { return sbufWritten_; }

 private:
  void add(const isa::AccessPattern& ap, int slot, bool write);

  /// The first size_ are set; the rest stay uninitialized (an OperandList is built per issue).
  union Storage {
    Storage() {}
    Operand operands[kMax];
  } storage_;
  size_t size_ = 0;
  bool usesSbuf_ = false, usesPsum_ = false;
  int64_t bytesRead_ = 0, bytesWritten_ = 0, sbufRead_ = 0, sbufWritten_ = 0;
};

}  // namespace neuronsim::sim
