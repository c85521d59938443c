#pragma once
// Memory-port conflicts. NC-v2 (A1): VectorE and GpSimdE cannot access SBUF at the same time,
// VectorE and ScalarE cannot access PSUM at the same time. NC-v3 (A2): VectorE and ScalarE
// access PSUM in parallel only in different banks. Plain C++: requests are granted in time
// order, the lower instruction index first when two would start at the same time; the SystemC
// shell only waits while a rival may still come first.

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

  /// `accessConflicts`: the NC-v2 rules (A1), which take all of PSUM as one port;
  /// `psumBankConflicts`: VectorE and ScalarE conflict on a common PSUM bank (A2);
  /// `psumEngines`: the engines (bit per engine) that access PSUM at all (the others are
  /// nobody's PSUM rival).
  PortArbiter(bool accessConflicts, bool psumBankConflicts, uint32_t psumEngines = ~0u);
  /// Whether `engine` has rivals on some port (else it never waits for a grant).
  bool arbitrates(isa::Engine engine) const {
    const auto e = static_cast<size_t>(engine);
    return (sbufRivals_[e] | psumRivals_[e]) != 0;
  }
  /// Whether `engine` has a rival on PSUM (else its PSUM banks need not be known).
  bool psumRivalled(isa::Engine engine) const {
    return psumRivals_[static_cast<size_t>(engine)] != 0;
  }
  /// Whether an instruction of `engine` using SBUF (`sbuf`) and the PSUM banks `psumBanks`
  /// (bit per bank) needs a grant: some rival may conflict with it.
  bool contends(isa::Engine engine, bool sbuf, uint64_t psumBanks) const {
    return rivals(engine, sbuf, psumBanks) != 0;
  }
  /// The earliest time from `t` on at which instruction `index` of `engine` finds its SBUF
  /// (`sbuf`) port and its PSUM banks (`psumBanks`) free of every claim so far, and whether
  /// that is final. `nextStart(rival)` is a lower bound on the start of the rival engine's
  /// next instruction (of its waiting request while it waits).
  template <class NextStart>
  Grant grant(isa::Engine engine, bool sbuf, uint64_t psumBanks, int64_t index, traces::Tick t,
              NextStart&& nextStart) const {
    psumBanks = ports(psumBanks);
    const traces::Tick at = std::max(t, freeAt(engine, sbuf, psumBanks));
    Verdict verdict = Verdict::Granted;
    for (uint32_t rest = rivals(engine, sbuf, psumBanks); rest != 0; rest &= rest - 1) {
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
  void claim(isa::Engine engine, bool sbuf, uint64_t psumBanks, traces::Tick until) {
    const auto e = static_cast<size_t>(engine);
    next_[e].waiting = false;
    if (sbuf) sbufUntil_[e] = until;
    for (uint64_t b = ports(psumBanks); b != 0; b &= b - 1)
      psumUntil_[e][static_cast<size_t>(__builtin_ctzll(b))] = until;
  }

 private:
  /// The PSUM ports (bit per port) that `psumBanks` use: one port for all of PSUM on NC-v2.
  uint64_t ports(uint64_t psumBanks) const {
    return wholePsum_ && psumBanks != 0 ? uint64_t{1} : psumBanks;
  }
  /// Engines (bit per engine) whose accesses may conflict with `engine`'s on the given ports.
  uint32_t rivals(isa::Engine engine, bool sbuf, uint64_t psumBanks) const {
    const auto e = static_cast<size_t>(engine);
    return (sbuf ? sbufRivals_[e] : 0u) | (psumBanks != 0 ? psumRivals_[e] : 0u);
  }
  traces::Tick freeAt(isa::Engine engine, bool sbuf, uint64_t psumBanks) const {
    traces::Tick t;
    const auto e = static_cast<size_t>(engine);
    for (uint32_t r = sbuf ? sbufRivals_[e] : 0u; r != 0; r &= r - 1)
      t = std::max(t, sbufUntil_[static_cast<size_t>(__builtin_ctz(r))]);
    for (uint32_t r = psumBanks != 0 ? psumRivals_[e] : 0u; r != 0; r &= r - 1) {
      const auto& until = psumUntil_[static_cast<size_t>(__builtin_ctz(r))];
      for (uint64_t b = psumBanks; b != 0; b &= b - 1)
        t = std::max(t, until[static_cast<size_t>(__builtin_ctzll(b))]);
    }
    return t;
  }

  bool wholePsum_;
  /// Per engine: the engines (bit per engine) its SBUF / PSUM accesses conflict with.
  std::array<uint32_t, isa::kNumEngines> sbufRivals_{}, psumRivals_{};
  std::array<traces::Tick, isa::kNumEngines> sbufUntil_{};
  /// Per engine and PSUM port (bank): when its latest claim ends.
  std::array<std::array<traces::Tick, 64>, isa::kNumEngines> psumUntil_{};
  /// Per engine: its next instruction, and whether it waits for its grant.
  struct Next {
    int64_t index = INT64_MAX;
    bool waiting = false;
  };
  std::array<Next, isa::kNumEngines> next_{};
};

}  // namespace neuronsim::sim
