#pragma once
// NC-v2 memory-port conflicts (A1): VectorE and GpSimdE cannot access SBUF at the same time,
// VectorE and ScalarE cannot access PSUM at the same time. Disabled on NC-v3 (A2). Plain C++:
// requests are granted in time order, the lower instruction index first when two would start
// at the same time; the SystemC shell only waits while a rival may still come first.

#include <algorithm>
#include <array>
#include <cstdint>

#include "isa/instruction.h"
#include "traces/tick.h"

namespace neuronsim::sim {

class PortArbiter {
 public:
  enum class Verdict {
    Granted,  ///< final: no rival can start first
    Earlier,  ///< a rival may still start before `at`
    Behind,   ///< a rival waiting for its grant, with a lower instruction index, may start at `at`
    Tie,      ///< a rival's next instruction has a lower index and may request at `at`
  };
  struct Grant {
    traces::Tick at;
    Verdict verdict;
  };

  explicit PortArbiter(bool enabled);
  bool enabled() const { return enabled_; }
  /// The earliest time from `t` on at which instruction `index` of `engine` finds its SBUF
  /// (`sbuf`) and/or PSUM (`psum`) ports free of every claim so far, and whether that is
  /// final. `nextStart(rival)` is a lower bound on the start of the rival engine's next
  /// instruction (of its waiting request while it waits).
  template <class NextStart>
  Grant grant(isa::Engine engine, bool sbuf, bool psum, int64_t index, traces::Tick t,
              NextStart&& nextStart) const {
    const traces::Tick at = std::max(t, freeAt(engine, sbuf, psum));
    Verdict verdict = Verdict::Granted;
    for (uint32_t rest = rivals(engine, sbuf, psum); rest != 0; rest &= rest - 1) {
      const auto rival = static_cast<size_t>(__builtin_ctz(rest));
      const traces::Tick bound = nextStart(static_cast<isa::Engine>(rival));
      if (bound > at) continue;
      if (bound < at) return {at, Verdict::Earlier};
      if (next_[rival].index < index)
        verdict = next_[rival].waiting          ? Verdict::Behind
                  : verdict == Verdict::Granted ? Verdict::Tie
                                                : verdict;
    }
    return {at, verdict};
  }
  /// `engine`'s next instruction (the one at its frontier) is `index`.
  void next(isa::Engine engine, int64_t index) { next_[static_cast<size_t>(engine)] = {index}; }
  /// Instruction `index` of `engine` waits for its grant (at or after the engine's frontier).
  void wait(isa::Engine engine, int64_t index) {
    next_[static_cast<size_t>(engine)] = {index, true};
  }
  /// Records that `engine` holds the ports it uses until `until` (its wait is over).
  void claim(isa::Engine engine, bool sbuf, bool psum, traces::Tick until) {
    if (!enabled_) return;
    const auto e = static_cast<size_t>(engine);
    next_[e].waiting = false;
    if (sbuf) sbufUntil_[e] = until;
    if (psum) psumUntil_[e] = until;
  }

 private:
  /// Engines (bit per engine) whose accesses conflict with `engine`'s on the given ports.
  uint32_t rivals(isa::Engine engine, bool sbuf, bool psum) const {
    const auto e = static_cast<size_t>(engine);
    return (sbuf ? sbufRivals_[e] : 0u) | (psum ? psumRivals_[e] : 0u);
  }
  traces::Tick freeAt(isa::Engine engine, bool sbuf, bool psum) const {
    traces::Tick t;
    const auto e = static_cast<size_t>(engine);
    for (uint32_t r = sbuf ? sbufRivals_[e] : 0u; r != 0; r &= r - 1)
      t = std::max(t, sbufUntil_[static_cast<size_t>(__builtin_ctz(r))]);
    for (uint32_t r = psum ? psumRivals_[e] : 0u; r != 0; r &= r - 1)
      t = std::max(t, psumUntil_[static_cast<size_t>(__builtin_ctz(r))]);
    return t;
  }

  bool enabled_;
  /// Per engine: the engines (bit per engine) its SBUF / PSUM accesses conflict with.
  std::array<uint32_t, isa::kNumEngines> sbufRivals_{}, psumRivals_{};
  std::array<traces::Tick, isa::kNumEngines> sbufUntil_{};
  std::array<traces::Tick, isa::kNumEngines> psumUntil_{};
  /// Per engine: its next instruction, and whether it waits for its grant.
  struct Next {
    int64_t index = INT64_MAX;
    bool waiting = false;
  };
  std::array<Next, isa::kNumEngines> next_{};
};

}  // namespace neuronsim::sim
