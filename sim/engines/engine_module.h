#pragma once
// One engine's sequencer: an SC_THREAD walking its in-order stream. It keeps a local time and
// runs ahead of the SystemC clock while its waits already hold (semaphore increments are
// registered with their landing times); it synchronizes with SystemC only to block on a
// semaphore, to trigger a DMA, or (NC-v2) to arbitrate memory ports.

#include <array>
#include <cstdint>
#include <systemc>
#include <vector>

#include "sim/core/core_context.h"
#include "sim/cost/clock.h"
#include "sim/cost/pe_throttle.h"
#include "sim/race/footprint.h"

namespace neuronsim::sim {

/// The sequencer of one engine (Tensor, Vector, Scalar, GpSimd or Sync).
class EngineModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EngineModule);
  /// `stream`: indices into program.instructions run by `engine`, in order.
  EngineModule(sc_core::sc_module_name name, CoreContext& context, isa::Engine engine,
               std::vector<int64_t> stream);

  isa::Engine engine() const { return engine_; }
  bool finished() const { return next_ >= stream_.size(); }
  /// The wait the engine is blocked on (null when not blocked on a semaphore).
  const isa::SemWait* blockedOn() const { return blockedOn_; }
  /// Index of the instruction at the head of the stream (-1 when finished).
  int64_t headInstruction() const { return finished() ? -1 : stream_[next_]; }

 private:
  /// An issued instruction whose results have not landed yet (for the RAW interlock).
  struct InFlight {
    double completeNs = 0;
    int64_t index = -1;
    Footprint dst;
  };
  /// Why the instruction started after it reached the head of the stream.
  struct Stall {
    traces::StallCause cause = traces::StallCause::None;
    int32_t sem = -1;
    int64_t value = 0;
    int64_t by = -1;
  };

  void run();
  void step(int64_t index);
  void awaitSemaphore(const isa::SemWait& wait, Stall& stall);
  void syncToLocal() { waitUntilNs(local_); }
  double interlockUntil(const isa::Instruction& inst, int64_t& by) const;
  double tensorEnd(const isa::Instruction& inst, double start, bool stalled, int64_t issueCycles,
                   int64_t lsCycles);
  void pushInFlight(const InFlight& entry);
  void emit(const isa::Instruction& inst, int64_t index, double readyNs, double start, double end,
            const Stall& stall, int64_t cycles, int64_t flops);

  static constexpr size_t kRing = 64;
  CoreContext& ctx_;
  isa::Engine engine_;
  EngineClock clock_;
  std::vector<int64_t> stream_;
  size_t next_ = 0;
  const isa::SemWait* blockedOn_ = nullptr;
  int agent_;
  bool lockstep_;     ///< synchronize before every instruction (NC-v2 port arbitration)
  double local_ = 0;  ///< this engine's time: when its next instruction reaches the head

  std::array<InFlight, kRing> ring_{};
  size_t ringHead_ = 0, ringSize_ = 0;

  // TensorE state.
  PeThrottle throttle_;
  const isa::AccessPattern* lastStationary_ = nullptr;
  double lastPeStartNs_ = -1;
  double lastPeEndNs_ = 0;
};

}  // namespace neuronsim::sim
