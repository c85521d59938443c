#pragma once
// Plain event records a timed run emits, and the sink interface that receives them.

#include <cstdint>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "traces/tick.h"

namespace neuronsim::traces {

/// Why an instruction started later than the moment it reached the head of its stream.
/// Semaphore: a wait had not held yet; EngineBusy: the engine's previous work (an earlier result
/// still in the pipeline, LoadStationary); Throttle: the TensorE dI/dt throttle held the issue
/// back; AccessConflict: an NC-v2 SBUF/PSUM port was taken.
enum class StallCause : uint8_t { None, Semaphore, EngineBusy, Throttle, AccessConflict };
std::string_view stallCauseName(StallCause cause);  // none, semaphore, engine_busy, ...

/// One executed instruction on a compute engine or sequencer.
struct InstructionEvent {
  int64_t index = -1;  ///< position in Program::instructions
  isa::Engine engine = isa::Engine::Vector;
  isa::Opcode opcode = isa::Opcode::TensorCopy;
  Tick ready;  ///< reached the head of its stream (previous one issued)
  Tick start;
  Tick end;  ///< the engine is free again (results land a pipeline latency later)
  StallCause stall = StallCause::None;
  int32_t waitSemaphore = -1;        ///< when stall == Semaphore: the semaphore that held it
  int64_t waitValue = 0;             ///< ... and the value it waited for
  int64_t waitedOnInstruction = -1;  ///< the instruction whose signal released it, or -1
  int64_t cycles = 0;                ///< engine cycles charged
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  int64_t flops = 0;  ///< raw flops (2 per MAC)
};

/// One DMA transfer (all its descriptors) on a queue.
struct DmaEvent {
  int64_t index = -1;  ///< the DMA instruction
  int32_t queue = 0;
  Tick issue;  ///< triggered by its engine
  Tick start;  ///< first byte moves
  Tick end;    ///< last descriptor done and completion signalled
  int64_t bytes = 0;
  int32_t descriptors = 0;
  int32_t dmaEngines = 0;  ///< how many of the 16 engines carried it
  int64_t hbmBytes = 0;    ///< bytes read from or written to HBM
};

/// A sampled counter (a step function: holds `value` from `at` until the next sample).
enum class Counter : uint8_t {
  PeUtilization,
  DmaGbps,
  SbufBytes,
  PsumBytes,
  PendingDmas,
  Throttle
};
std::string_view counterName(Counter counter);
struct CounterSample {
  Counter counter = Counter::PeUtilization;
  Tick at;
  double value = 0;
};

/// A read of memory no instruction had written (what the interpreter sees as NaN fill).
struct UninitializedRead {
  int64_t index = -1;  ///< the reading instruction
  std::string what;    ///< operand and address range, e.g. "src0 sbuf p0-127 bytes 0-511"
};

/// Contract: the simulator calls these in nondecreasing order of start time per engine and
/// queue; implementations buffer and must not throw.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void instruction(const InstructionEvent& event) = 0;
  virtual void dma(const DmaEvent& event) = 0;
  virtual void counter(const CounterSample& sample) = 0;
  /// Optional: reported once per offending instruction and operand.
  virtual void uninitializedRead(const UninitializedRead&) {}
};

/// Everything a run recorded, kept in memory (the sink most callers use).
struct EventLog : EventSink {
  std::vector<InstructionEvent> instructions;
  std::vector<DmaEvent> dmas;
  std::vector<CounterSample> counters;
  std::vector<UninitializedRead> uninitializedReads;
  void instruction(const InstructionEvent& e) override { instructions.push_back(e); }
  void dma(const DmaEvent& e) override { dmas.push_back(e); }
  void counter(const CounterSample& s) override { counters.push_back(s); }
  void uninitializedRead(const UninitializedRead& r) override { uninitializedReads.push_back(r); }
};

}  // namespace neuronsim::traces
