#pragma once
// The core's semaphores: timelines of registered increments, which agents may still signal
// each one, and who is blocked on which value. Plain C++; the SystemC shell turns "wake these
// agents" into events.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "isa/program.h"
#include "sim/core/semaphore_timeline.h"
#include "sim/machine_config.h"
#include "sim/race/vector_clock.h"

namespace neuronsim::sim {

/// Which agents signal each semaphore, gathered in the one pass over the program that also
/// validates it and splits it into streams.
struct SemaphoreUsage {
  explicit SemaphoreUsage(size_t semaphores)
      : signallers(semaphores), readSignallers(semaphores), signals(semaphores) {}
  /// Records the signals of `inst` (semaphore indices already checked).
  void note(const isa::Instruction& inst) {
    const bool dma = isa::isDma(inst.opcode);
    for (const isa::SemSignal& s : inst.signals) {
      const auto sem = static_cast<size_t>(s.sem);
      ++signals[sem];
      signallers[sem] |= 1u << (dma ? queueAgent(inst.dmaQueue) : engineAgent(inst.engine));
      if (!dma && s.at == isa::SignalAt::Read)
        readSignallers[sem] |= static_cast<uint8_t>(1u << static_cast<unsigned>(inst.engine));
    }
  }

  std::vector<uint32_t> signallers;     ///< per semaphore: bit per agent
  std::vector<uint8_t> readSignallers;  ///< per semaphore: bit per engine signalling it @read
  std::vector<int64_t> signals;         ///< per semaphore: signals in the program
};

/// Contract: an engine agent registers its signals when it issues, and each engine keeps its
/// frontier (advanceFrontier) at or below the start of its next instruction. A DMA queue
/// registers a signal at the SystemC time it fires. So at SystemC time `now` every increment
/// visible before `now` is registered, and settled() tells when a later reach is final too.
class SemaphoreBank {
 public:
  SemaphoreBank(const SemaphoreUsage& usage, const MachineConfig& machine);

  /// Delay from an engine's signal landing to a waiter on another engine seeing it
  /// (semaphore_handoff_cycles of the base clock). DMA signals carry none: their latencies
  /// are the DMA model's.
  Tick handoff() const { return handoff_; }
  /// Registers `delta` on `sem` visible at `at`, from instruction `by`. Returns the agents
  /// (bit per agent) whose awaited value is now reached; they stop waiting.
  uint32_t add(int32_t sem, Tick at, int64_t delta, int64_t by) {
    Semaphore& s = semaphores_[static_cast<size_t>(sem)];
    // Every later query comes from an engine at or after its frontier.
    Tick floor = Tick::never();
    for (size_t e = 0; e < isa::kNumEngines; ++e) floor = std::min(floor, frontier_[e]);
    s.timeline.add(at, delta, by, floor);
    return s.waiters.empty() ? 0u : wakeWaiters(s);
  }
  SemaphoreTimeline::Reach firstReach(int32_t sem, int64_t value) const {
    return semaphores_[static_cast<size_t>(sem)].timeline.firstReach(value);
  }
  /// The agents (bit per agent) with a signal on `sem` in the program.
  uint32_t signallers(int32_t sem) const {
    return semaphores_[static_cast<size_t>(sem)].signallers;
  }
  /// Value after every registered increment.
  int64_t value(int32_t sem) const {
    return semaphores_[static_cast<size_t>(sem)].timeline.finalValue();
  }
  /// True when no increment still to be registered on `sem` can become visible before `t`.
  bool settled(int32_t sem, Tick t, Tick now) const { return t <= now || settledLater(sem, t); }
  /// Engine agent `agent` will start no instruction before `t` (Tick::never() when done).
  void advanceFrontier(int agent, Tick t) { frontier_[static_cast<size_t>(agent)] = t; }
  /// Engine agent `agent` is blocked until `sem` reaches `value` (`sem` -1: it is not).
  void setBlocked(int agent, int32_t sem, int64_t value) {
    blocked_[static_cast<size_t>(agent)] = {sem, value};
  }
  /// A lower bound on the start of engine agent `agent`'s next instruction at SystemC time
  /// `now`: its frontier, and while it is blocked on a semaphore the earliest time the value
  /// can be reached (by registered increments or by the least lookahead of its signallers).
  Tick nextStartBound(int agent, Tick now) const {
    const Tick frontier = frontier_[static_cast<size_t>(agent)];
    if (blocked_[static_cast<size_t>(agent)].sem < 0 || frontier == Tick::never()) return frontier;
    return blockedStartBound(agent, frontier, now);
  }
  /// `agent` blocks until `sem` has reached `value` (reported once by add()).
  void addWaiter(int agent, int32_t sem, int64_t value) {
    waitersOf(sem).push_back({agent, value});
    listening_ |= 1u << agent;
  }
  /// `agent` blocks until any increment of `sem` is registered (reported once by add()).
  void addChangeWaiter(int agent, int32_t sem) { addWaiter(agent, sem, kAnyChange); }
  /// True while a wait `agent` added is registered (add() has not reported it).
  bool listening(int agent) const { return (listening_ >> agent) & 1u; }
  /// Forgets `agent`'s waits on `sem` (it stopped waiting for another reason).
  void removeWaiter(int agent, int32_t sem);

 private:
  static constexpr int64_t kAnyChange = INT64_MIN;
  /// One waiting agent: for a value, or for any change (kAnyChange).
  struct Waiter {
    int agent;
    int64_t value;
  };
  struct Semaphore {
    SemaphoreTimeline timeline;
    uint32_t signallers = 0;  ///< agents with a signal on this semaphore in the program
    /// Per engine: least time from the engine's frontier to one of its increments becoming
    /// visible (its pipeline latency when it signals this semaphore only at completion).
    std::array<Tick, isa::kNumEngines> lookahead{};
    std::vector<Waiter> waiters;
  };

  /// nextStartBound() of an agent blocked on a semaphore, its frontier `frontier` (not never).
  Tick blockedStartBound(int agent, Tick frontier, Tick now) const;
  /// settled() for `t` later than SystemC now.
  bool settledLater(int32_t sem, Tick t) const;
  /// Removes and returns (bit per agent) the waiters of `s` whose wait is over.
  uint32_t wakeWaiters(Semaphore& s);
  std::vector<Waiter>& waitersOf(int32_t sem) {
    return semaphores_[static_cast<size_t>(sem)].waiters;
  }

  /// The semaphore and value an engine waits for (sem -1 when it is not blocked).
  struct Blocked {
    int32_t sem = -1;
    int64_t value = 0;
  };

  Tick handoff_;
  std::vector<Semaphore> semaphores_;
  std::array<Tick, kNumAgents> frontier_{};
  std::array<Blocked, isa::kNumEngines> blocked_{};
  uint32_t listening_ = 0;  ///< bit per agent with a registered wait
};

}  // namespace neuronsim::sim
