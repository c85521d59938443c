#pragma once
// The SystemC shell of one engine's sequencer: one SC_THREAD walking its in-order stream. The
// timing is EngineTiming's; the shell waits (for semaphores, for NC-v2 ports, before a DMA
// trigger) and signals. It runs ahead of the SystemC clock while a wait's reach is settled
// (SemaphoreBank::settled) and blocks only when an increment it needs is not registered yet.

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "sim/core/core_context.h"
#include "sim/engines/engine_timing.h"
#include "sim/engines/stream_decoder.h"

namespace neuronsim::sim {

/// The sequencer of one engine (Tensor, Vector, Scalar, GpSimd or Sync).
class EngineModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EngineModule);
  /// `stream`: indices into program.instructions run by `engine`, in order.
  EngineModule(sc_core::sc_module_name name, CoreContext& context, isa::Engine engine,
               LargeVector<int64_t> stream);

  isa::Engine engine() const { return engine_; }
  bool finished() const { return stream_.finished(); }
  /// The wait the engine is blocked on (null when not blocked on a semaphore).
  const isa::SemWait* blockedOn() const { return blockedOn_; }
  /// Index of the instruction at the head of the stream (-1 when finished).
  int64_t headInstruction() const { return stream_.headIndex(); }

 private:
  void run();
  void step(const DecodedInstruction& inst);
  /// The earliest time from `t` on at which `wait` holds; records a Semaphore stall when
  /// it binds.
  Tick awaitSemaphore(const isa::SemWait& wait, Tick t, Stall& stall);
  /// The earliest time from `t` on at which the NC-v2 ports `inst` uses are free: the
  /// arbiter's grant when final, else decided at SystemC time (a rival may still come first).
  Tick awaitPorts(const DecodedInstruction& inst, Tick t, Stall& stall);

  CoreContext& ctx_;
  isa::Engine engine_;
  int agent_;
  bool arbitrated_;  ///< its instructions ask the NC-v2 port arbiter (Trn1 Vector/Scalar/GpSimd)
  std::unique_ptr<EngineTiming> timing_;
  StreamDecoder stream_;
  const isa::SemWait* blockedOn_ = nullptr;
};

}  // namespace neuronsim::sim
