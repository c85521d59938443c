#pragma once
// The timing of one engine's in-order stream as a plain C++ model: when the next instruction
// reaches the head, the same-engine read-after-write interlock, issue and pipeline latency,
// DMA trigger cost. TensorE adds LoadStationary and the throttle (tensor_timing.h). The
// SystemC shell (engine_module.h) only waits for semaphores and ports and signals.

#include <array>
#include <cstddef>
#include <memory>
#include <span>

#include "isa/instruction.h"
#include "sim/cost/clock.h"
#include "sim/engines/issue.h"
#include "sim/engines/stream_decoder.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Vector, Scalar, GpSimd and Sync timing (the base of TensorTiming).
class EngineTiming {
 public:
  EngineTiming(isa::Engine engine, const MachineConfig& machine);
  virtual ~EngineTiming() = default;
  EngineTiming(const EngineTiming&) = delete;
  EngineTiming& operator=(const EngineTiming&) = delete;

  /// When the next instruction reaches the head of the stream (the previous one issued).
  Tick head() const { return head_; }
  const EngineClock& clock() const { return clock_; }
  /// The earliest start of an instruction whose waits hold from `t` and that has `operands`:
  /// no earlier than results of this engine it reads land (read-after-write interlock).
  /// Records an EngineBusy stall when the interlock binds.
  /// Queries come with nondecreasing `t`.
  Tick afterInterlock(std::span<const Operand> operands, Tick t, Stall& stall) {
    return interlock_ && ringSize_ > 0 ? afterInFlight(operands, t, stall) : t;
  }
  /// Issues compute instruction `inst` writing `dst` that may start at `start` (>= head());
  /// `stall` holds what delayed it so far. Moves head() to the end of its issue. Not virtual
  /// (inline on the hot path): TensorTiming::issue hides it.
  Issue issue(const DecodedInstruction& inst, const Footprint& dst, Tick start,
              const Stall& stall) {
    Issue issue = begin(start, stall);
    issue.end = start + clock_.toTicks(inst.cost.issue);
    issue.complete = issue.end + latency_;
    issue.cycles = inst.cost.issue;
    if (interlock_) pushInFlight({issue.complete, inst.index, dst});
    head_ = issue.end;
    return issue;
  }
  /// Issues a DMA trigger at `start` that holds the engine for `duration` (DmaModule's).
  Issue trigger(Tick start, Tick duration, const Stall& stall);

 protected:
  /// An issue ready at head() and starting at `start`, delayed by `stall`.
  Issue begin(Tick start, const Stall& stall) const {
    Issue issue;
    issue.ready = head_;
    issue.start = start;
    issue.executing = start;
    issue.stall = stall;
    return issue;
  }

  EngineClock clock_;
  Tick latency_;  ///< issue end to results landing
  Tick head_;

 private:
  /// A result still in the pipeline.
  struct InFlight {
    Tick lands;
    int64_t index = -1;
    Footprint dst;
  };
  static constexpr size_t kRing = 64;

  void pushInFlight(const InFlight& entry) {
    while (ringSize_ > 0 && ring_[ringHead_].lands <= head_) {
      ringHead_ = (ringHead_ + 1) % kRing;
      --ringSize_;
    }
    if (ringSize_ == kRing) {  // deeper than modelled: forget the oldest
      ringHead_ = (ringHead_ + 1) % kRing;
      --ringSize_;
    }
    ring_[(ringHead_ + ringSize_) % kRing] = entry;
    ++ringSize_;
  }
  /// afterInterlock() over the results in flight.
  Tick afterInFlight(std::span<const Operand> operands, Tick t, Stall& stall) {
    // Results land in issue order, and every later query starts at or after t: the ones
    // landed by t matter to no one any more.
    while (ringSize_ > 0 && ring_[ringHead_].lands <= t) {
      ringHead_ = (ringHead_ + 1) % kRing;
      --ringSize_;
    }
    for (size_t i = 0; i < ringSize_; ++i) {
      const InFlight& f = ring_[(ringHead_ + i) % kRing];
      if (f.lands <= t) continue;
      for (const Operand& op : operands) {
        if (op.write || !boxesOverlap(op.box, f.dst)) continue;
        t = f.lands;
        stall = {traces::StallCause::EngineBusy, -1, 0, f.index};
        break;
      }
    }
    return t;
  }

  bool interlock_;
  std::array<InFlight, kRing> ring_{};
  size_t ringHead_ = 0, ringSize_ = 0;
};

/// The timing model of `engine` (TensorTiming for Tensor).
std::unique_ptr<EngineTiming> makeEngineTiming(isa::Engine engine, const MachineConfig& machine);

}  // namespace neuronsim::sim
