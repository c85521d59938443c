#pragma once
// NC-v2 memory-port conflicts (A1): VectorE and GpSimdE cannot access SBUF at the same time,
// VectorE and ScalarE cannot access PSUM at the same time. Disabled on NC-v3 (A2).

#include <array>

#include "isa/instruction.h"
#include "traces/tick.h"

namespace neuronsim::sim {

class AccessArbiter {
 public:
  explicit AccessArbiter(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  /// Earliest time at which `engine` may start an access to SBUF (`sbuf`) and/or PSUM (`psum`)
  /// without overlapping a conflicting engine's current access.
  traces::Tick freeAt(isa::Engine engine, bool sbuf, bool psum) const;
  /// Records that `engine` holds the ports it uses until `until`.
  void claim(isa::Engine engine, bool sbuf, bool psum, traces::Tick until);

 private:
  bool enabled_;
  std::array<traces::Tick, isa::kNumEngines> sbufUntil_{};
  std::array<traces::Tick, isa::kNumEngines> psumUntil_{};
};

}  // namespace neuronsim::sim
