// Batch decoding of an engine stream with software prefetch.
#include "sim/engines/stream_decoder.h"

#include <algorithm>
#include <array>

namespace neuronsim::sim {
namespace {

/// Prefetch distances in stream positions: the object, then the arrays it points to, then
/// the srcs' dims (each level needs the one before it cached).
constexpr size_t kObjectAhead = 24;
constexpr size_t kHeapAhead = 12;
constexpr size_t kDimsAhead = 6;

/// Where one record's semaphores and read boxes sit in the decoder's arrays.
struct Ranges {
  size_t waits, waitCount, signals, signalCount, operands, operandCount;
};

}  // namespace

StreamDecoder::StreamDecoder(const isa::Program& program, const MachineConfig& machine,
                             LargeVector<int64_t> stream)
    : program_(program), machine_(machine), stream_(std::move(stream)), batch_(kBatch) {}

void StreamDecoder::prefetch(size_t at, bool heap) const {
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
  waits_.clear();
  signals_.clear();
  operands_.clear();
  std::array<Ranges, kBatch> ranges;
  for (size_t at = batchBegin_; at < batchEnd_; ++at) {
    prefetch(at + kObjectAhead, false);
    prefetch(at + kHeapAhead, true);
    if (at + kDimsAhead < stream_.size()) {
      const isa::Instruction& ahead =
          program_.instructions[static_cast<size_t>(stream_[at + kDimsAhead])];
      for (const isa::AccessPattern& src : ahead.srcs) __builtin_prefetch(src.dims.data());
    }
    const int64_t index = stream_[at];
    const isa::Instruction& inst = program_.instructions[static_cast<size_t>(index)];
    Ranges& r = ranges[at - batchBegin_];
    r.waits = waits_.size();
    r.signals = signals_.size();
    r.operands = operands_.size();
    waits_.insert(waits_.end(), inst.waits.begin(), inst.waits.end());
    signals_.insert(signals_.end(), inst.signals.begin(), inst.signals.end());
    decode(inst, index, batch_[at - batchBegin_]);
    r.waitCount = inst.waits.size();
    r.signalCount = inst.signals.size();
    r.operandCount = operands_.size() - r.operands;
  }
  for (size_t i = 0; i < batchEnd_ - batchBegin_; ++i) {
    DecodedInstruction& d = batch_[i];
    const Ranges& r = ranges[i];
    d.waits = {waits_.data() + r.waits, r.waitCount};
    d.signals = {signals_.data() + r.signals, r.signalCount};
    d.operands = {operands_.data() + r.operands, r.operandCount};
  }
}

void StreamDecoder::decode(const isa::Instruction& inst, int64_t index, DecodedInstruction& out) {
  out = DecodedInstruction{};
  out.index = index;
  out.inst = &inst;
  out.opcode = inst.opcode;
  out.engine = inst.engine;
  out.dma = isa::isDma(inst.opcode);
  out.readSignal = std::any_of(inst.signals.begin(), inst.signals.end(),
                               [](const isa::SemSignal& s) { return s.at == isa::SignalAt::Read; });
  try {
    const OperandList operands(inst);
    operands_.insert(operands_.end(), operands.begin(), operands.end());
    out.usesSbuf = operands.usesSbuf();
    out.usesPsum = operands.usesPsum();
    out.bytesRead = operands.bytesRead();
    out.bytesWritten = operands.bytesWritten();
    out.sbufBytesRead = operands.sbufBytesRead();
    out.sbufBytesWritten = operands.sbufBytesWritten();
  } catch (...) {
    out.failure = DecodedInstruction::Failure::Operands;
    out.error = std::current_exception();
    return;
  }
  if (out.dma) return;
  try {
    out.cost = computeCost(inst, machine_);
    if (inst.engine == isa::Engine::Tensor) {
      const isa::AccessPattern& stationary = inst.srcs.at(0);
      out.newStationary = !lastStationary_ || !(*lastStationary_ == stationary);
      lastStationary_ = &stationary;
    }
  } catch (...) {
    out.failure = DecodedInstruction::Failure::Cost;
    out.error = std::current_exception();
  }
}

}  // namespace neuronsim::sim
