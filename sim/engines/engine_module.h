#pragma once
// The SystemC shell of the engines' sequencers. An EngineSequencer walks one engine's in-order
// stream as a resumable step: it waits (for semaphores, for NC-v2 port grants, before a DMA
// trigger) by telling what would let it go on, and signals. It runs ahead of the SystemC clock
// while a wait's reach is settled (SemaphoreBank::settled). An EngineModule is one SC_THREAD
// driving one sequencer, or on Trn1 the three that share ports (Vector, Scalar, GpSimd): one
// thread computes all their requests and grants, so a grant that needs a rival's next request
// costs no thread switch; or all five, where nothing watches the order in which different
// engines issue (engineThreads).

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "sim/core/core_context.h"
#include "sim/engines/engine_timing.h"
#include "sim/engines/stream_decoder.h"

namespace neuronsim::sim {

class TensorTiming;

/// What a blocked sequencer waits for before it tries again (the earliest of them).
struct Resume {
  Tick at = Tick::never();  ///< SystemC time reaching this
  bool wake = false;        ///< its agent's wake event (a semaphore increment)
  bool delta = false;       ///< one delta cycle (rivals that wake now make their requests)
};

/// The sequencer of one engine (Tensor, Vector, Scalar, GpSimd or Sync).
class EngineSequencer {
 public:
  /// `stream`: indices into program.instructions run by `engine`, in order.
  EngineSequencer(CoreContext& context, isa::Engine engine, isa::LargeVector<int64_t> stream);

  /// Issues head instructions at SystemC time `now` until one blocks (`resume` says until
  /// when) or the stream ends. True when rivals may have something new to see: it issued an
  /// instruction or posted a port request.
  bool advance(Tick now, Resume& resume);
  /// One delta cycle passed since advance() asked for it.
  void yielded() { yielded_ = yielded_ || yieldAsked_; }
  /// Its thread drives the engine agents `agents` (bit per agent).
  void drivenWith(uint32_t agents) { threadAgents_ = agents; }

  isa::Engine engine() const { return engine_; }
  /// Its instructions ask the NC-v2 port arbiter (Trn1 Vector, Scalar and GpSimd).
  bool arbitrated() const { return arbitrated_; }
  bool finished() const { return stream_.finished(); }
  /// The wait the engine is blocked on (null when not blocked on a semaphore).
  const isa::SemWait* blockedOn() const { return blockedOn_; }
  /// Index of the instruction at the head of the stream (-1 when finished).
  int64_t headInstruction() const { return stream_.headIndex(); }

 private:
  enum class Progress {
    Issued,   ///< the head instruction issued
    Changed,  ///< blocked, after posting a port request rivals must see
    Blocked,  ///< blocked; `resume` says until when
  };
  enum class Phase { Head, Waits, Ports, Trigger };

  /// advance() of a sequencer that asks for port grants (`kPorts`: arbitrated()) or not, each
  /// with only its own code.
  template <bool kPorts>
  bool advanceWith(Tick now, Resume& resume);
  /// Takes the head instruction as far as it can go at SystemC time `now`.
  template <bool kPorts>
  Progress step(Tick now, Resume& resume);
  /// The wait registered with the semaphore bank for the current SemWait.
  enum class Listen { None, Value, Change };

  /// A wait not blocked on before that holds from t_ without blocking: `reach` is at or
  /// before t_, or later and final (t_ moved to it, with a Semaphore stall).
  bool passes(const isa::SemWait& wait, SemaphoreTimeline::Reach reach, Tick now, Resume& resume);
  /// Moves t_ to `reach`, the start `wait` held back.
  void stallOn(const isa::SemWait& wait, SemaphoreTimeline::Reach reach);
  /// Blocks on `wait`, first reached at `reach` (later than t_, not final): registers it for
  /// its value or for a change of its semaphore, replacing the `registered` kind, unless only
  /// its own thread signals the semaphore.
  void blockOn(const isa::SemWait& wait, Tick reach, Listen registered, Resume& resume);
  /// True when `wait`, first reached by registered increments at `reach`, holds from t_ on
  /// (t_ moved to its reach, with a Semaphore stall, when it binds); else fills `resume`.
  bool awaitSemaphore(const isa::SemWait& wait, SemaphoreTimeline::Reach reach, Tick now,
                      Resume& resume);
  /// True when the NC-v2 port grant for `inst` from t_ is final (t_ moved to it); else
  /// fills `resume` and sets `posted` when rivals must learn of a new request.
  bool awaitPorts(const DecodedInstruction& inst, Tick now, Resume& resume, bool& posted);
  /// After the waits of `inst` held from `t`: the frontier, the race detector's acquires and
  /// (compute) the interlock; returns the start so far (`stall` updated).
  Tick pastWaits(const DecodedInstruction& inst, Tick t, Stall& stall);
  /// Issues compute instruction `inst` from `t` and finishes it.
  template <bool kPorts>
  void issueCompute(const DecodedInstruction& inst, Tick t, const Stall& stall);
  /// Signals, semantics, DMA post and record of `inst` issued as `issue`; pops it.
  void finish(const DecodedInstruction& inst, const Issue& issue);

  CoreContext& ctx_;
  isa::Engine engine_;
  int agent_;
  bool arbitrated_;
  std::unique_ptr<EngineTiming> timing_;
  TensorTiming* tensor_;  ///< timing_ on the Tensor engine (its own issue()), else null
  StreamDecoder stream_;
  const isa::SemWait* blockedOn_ = nullptr;
  uint32_t threadAgents_ = 0;  ///< the agents its thread drives (drivenWith)

  // The head instruction's progress.
  Phase phase_ = Phase::Head;
  size_t nextWait_ = 0;
  Tick t_;
  Stall stall_;
  Listen listen_ = Listen::None;
  bool posted_ = false;      ///< rivals know its port request (index, and t_ as the frontier)
  bool yieldAsked_ = false;  ///< it asked for one delta cycle at a port tie
  bool yielded_ = false;     ///< one delta cycle given to rivals that wake at t_
};

/// One SC_THREAD driving `sequencers` (one engine, or the engines that share NC-v2 ports).
class EngineModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(EngineModule);
  EngineModule(sc_core::sc_module_name name, CoreContext& context,
               std::vector<EngineSequencer*> sequencers);

 private:
  void run();
  /// Suspends the thread until what `resume` names.
  void await(const Resume& resume);

  CoreContext& ctx_;
  std::vector<EngineSequencer*> sequencers_;
  sc_core::sc_event_or_list wake_;  ///< the sequencers' wake events (two or more)
  uint32_t agents_ = 0;             ///< the sequencers' agents (bit per agent)
};

/// The threads driving `sequencers` (which outlive them): one per engine, and on Trn1 one for
/// the three engines that share NC-v2 ports; with `together`, one for all of them. No time
/// depends on the layout, but the order in which different engines issue does, and a trace
/// (its event order and flow ids), race reports and a racy program's memory see that order:
/// `together` where none of them is watched saves a thread switch whenever one engine
/// unblocks another.
std::vector<std::unique_ptr<EngineModule>> engineThreads(
    CoreContext& context, const std::vector<std::unique_ptr<EngineSequencer>>& sequencers,
    bool together);

}  // namespace neuronsim::sim
