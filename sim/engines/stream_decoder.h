#pragma once
// An engine stream decoded a batch ahead of its sequencer: per instruction the costs, operand
// boxes, byte counts and semaphores the timed model reads, in small records that stay in
// cache. Instructions are large and scattered on the heap; decoding a batch in one loop,
// prefetching ahead, overlaps their cache misses instead of stalling on each in turn.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "isa/huge_page_allocator.h"
#include "isa/instruction.h"
#include "isa/program.h"
#include "sim/core/operand_list.h"
#include "sim/cost/compute_cost.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// What the timed model needs of one instruction of a stream.
struct DecodedInstruction {
  /// Where decoding failed; the sequencer rethrows there so that a malformed instruction
  /// fails at the same point of the run as when it was decoded in place.
  enum class Failure : uint8_t {
    None,
    Operands,  ///< enumerating the operands (before the waits)
    Cost,      ///< costing it (after the waits, interlock and ports)
  };

  int64_t index = -1;  ///< into program.instructions
  const isa::Instruction* inst = nullptr;
  isa::Opcode opcode = isa::Opcode::TensorCopy;
  isa::Engine engine = isa::Engine::Vector;
  bool dma = false;
  bool usesSbuf = false;
  /// The PSUM banks its operands touch (bit per bank, isa::Geometry::psumBankMask): what the
  /// port arbiter claims. Only on an engine with a PSUM rival (VectorE, ScalarE), else 0.
  uint64_t psumBanks = 0;
  bool readSignal = false;  ///< some signal fires @read
  /// TensorE: its stationary (srcs[0]) differs from the previous PE instruction's, or it is
  /// the first one (LoadStationary, P1).
  bool newStationary = false;
  Failure failure = Failure::None;
  std::exception_ptr error;  ///< set with `failure`
  ComputeCost cost;          ///< compute instructions only
  int64_t bytesRead = 0, bytesWritten = 0, sbufBytesRead = 0, sbufBytesWritten = 0;
  std::span<const isa::SemWait> waits;
  std::span<const isa::SemSignal> signals;
  /// Every operand in slot order (dst first; empty on an Operands failure) with its box when
  /// something reads the boxes: the interlock and in-flight results of Vector, Scalar and
  /// GpSimd, and the race detector. Else (TensorE and DMA without races) dst alone.
  std::span<const Operand> operands;
};

/// Walks one engine's stream, decoding kBatch instructions at a time.
class StreamDecoder {
 public:
  static constexpr size_t kBatch = 64;

  /// `stream`: indices into program.instructions, in issue order; `races`: the race detector
  /// reads every operand's box (else only the interlocked engines' compute operands get one);
  /// `psumBanks`: the engine has a PSUM rival, so its compute instructions' banks are wanted.
  StreamDecoder(const isa::Program& program, const MachineConfig& machine,
                isa::LargeVector<int64_t> stream, bool races, bool psumBanks);

  bool finished() const { return next_ >= stream_.size(); }
  /// Index of the instruction at the head of the stream (-1 when finished).
  int64_t headIndex() const { return finished() ? -1 : stream_[next_]; }
  /// The head instruction, decoded (not finished()); valid until pop().
  const DecodedInstruction& head() {
    if (next_ == batchEnd_) refill();
    return batch_[next_ - batchBegin_];
  }
  void pop() { ++next_; }

 private:
  void refill();
  /// Decodes `inst` into `out`, its operands from operands_[used] on; returns how many.
  size_t decode(const isa::Instruction& inst, int64_t index, size_t used, DecodedInstruction& out);
  /// Asks the cache for what decode() reads of stream_[at], when in range: with `heap`, the
  /// arrays its vectors point to (the object itself must be cached by then), else the object.
  void prefetch(size_t at, bool heap) const;

  const isa::Program& program_;
  const MachineConfig& machine_;
  isa::LargeVector<int64_t> stream_;
  size_t next_ = 0;
  size_t batchBegin_ = 0, batchEnd_ = 0;  ///< stream positions decoded in batch_
  bool races_;
  bool psumBanks_;
  std::vector<DecodedInstruction> batch_;
  std::vector<Operand> operands_;  ///< the batch's operands (capacity for kBatch full records)
  const isa::AccessPattern* lastStationary_ = nullptr;
};

}  // namespace neuronsim::sim
