// Batch decoding of an engine stream with software prefetch.
#include "sim/engines/stream_decoder.h"

#include <algorithm>

namespace neuronsim::sim {
namespace {

/// Prefetch distances in stream positions: the object, then the arrays it points to, then
/// the srcs' dims (each level needs the one before it cached).
constexpr size_t kObjectAhead = 24;
constexpr size_t kHeapAhead = 12;
constexpr size_t kDimsAhead = 6;

}  // namespace

StreamDecoder::StreamDecoder(const isa::Program& program, const MachineConfig& machine,
                             isa::LargeVector<int64_t> stream, bool races, bool psumBanks)
    : program_(program),
      machine_(machine),
      stream_(std::move(stream)),
      races_(races),
      psumBanks_(psumBanks),
      batch_(kBatch),
      operands_(kBatch * kMaxOperands) {}

// Inlined: refill() calls it twice per instruction with a constant `heap`.
[[gnu::always_inline]] inline void StreamDecoder::prefetch(size_t at, bool heap) const {
  if (at >= stream_.size()) return;
  const isa::Instruction& inst = program_.instructions[static_cast<size_t>(stream_[at])];
  if (!heap) {
    const char* bytes = reinterpret_cast<const char*>(&inst);
    for (size_t line = 0; line < sizeof(isa::Instruction); line += 64)
      __builtin_prefetch(bytes + line);
    return;
  }
  __builtin_prefetch(inst.dst.dims.data());
  __builtin_prefetch(inst.srcs.data());
  __builtin_prefetch(inst.srcs.data() + 1);
  __builtin_prefetch(inst.waits.data());
  __builtin_prefetch(inst.signals.data());
}

void StreamDecoder::refill() {
  batchBegin_ = next_;
  batchEnd_ = std::min(stream_.size(), next_ + kBatch);
  size_t used = 0;
  for (size_t at = batchBegin_; at < batchEnd_; ++at) {
    prefetch(at + kObjectAhead, false);
    prefetch(at + kHeapAhead, true);
    if (at + kDimsAhead < stream_.size()) {
      const isa::Instruction& ahead =
          program_.instructions[static_cast<size_t>(stream_[at + kDimsAhead])];
      for (const isa::AccessPattern& src : ahead.srcs) __builtin_prefetch(src.dims.data());
    }
    const int64_t index = stream_[at];
    used += decode(program_.instructions[static_cast<size_t>(index)], index, used,
                   batch_[at - batchBegin_]);
  }
}

size_t StreamDecoder::decode(const isa::Instruction& inst, int64_t index, size_t used,
                             DecodedInstruction& out) {
  out.index = index;
  out.inst = &inst;
  out.opcode = inst.opcode;
  out.engine = inst.engine;
  out.dma = isa::isDma(inst.opcode);
  out.newStationary = false;
  out.failure = DecodedInstruction::Failure::None;
  if (out.error) out.error = nullptr;
  out.waits = inst.waits;
  out.signals = inst.signals;
  bool readSignal = false;
  for (const isa::SemSignal& s : inst.signals) readSignal |= s.at == isa::SignalAt::Read;
  out.readSignal = readSignal;
  Operand* operands = operands_.data() + used;
  OperandShape shapes[kMaxOperands];
  OperandTotals totals;
  const bool boxes = races_ || (!out.dma && inst.engine != isa::Engine::Tensor);
  try {
    totals = listOperands(inst, boxes, operands, shapes);
  } catch (...) {
    out.operands = {};
    out.failure = DecodedInstruction::Failure::Operands;
    out.error = std::current_exception();
    return 0;
  }
  const size_t records = boxes ? totals.count : 1;
  out.operands = {operands, records};
  out.usesSbuf = totals.usesSbuf;
  out.psumBanks = 0;
  if (psumBanks_ && totals.usesPsum && !out.dma)
    for (const Operand& op : out.operands)
      if (op.box.space == isa::Space::Psum)
        out.psumBanks |= machine_.geometry.psumBankMask(op.box.byteBegin, op.box.byteEnd);
  out.bytesRead = totals.bytesRead;
  out.bytesWritten = totals.bytesWritten;
  out.sbufBytesRead = totals.sbufBytesRead;
  out.sbufBytesWritten = totals.sbufBytesWritten;
  if (out.dma) {
    out.cost = ComputeCost{};
    return records;
  }
  try {
    out.cost = computeCost(inst, {shapes, totals.count}, machine_);
    if (inst.engine == isa::Engine::Tensor) {
      const isa::AccessPattern& stationary = inst.srcs.at(0);
      out.newStationary = !lastStationary_ || !(*lastStationary_ == stationary);
      lastStationary_ = &stationary;
    }
  } catch (...) {
    out.failure = DecodedInstruction::Failure::Cost;
    out.error = std::current_exception();
  }
  return records;
}

}  // namespace neuronsim::sim
