#pragma once
// Strong time types: engine cycles vs nanoseconds, converted only through an EngineClock.

#include <cstdint>

#include "isa/instruction.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// A count of one engine's clock cycles.
struct Cycles {
  int64_t value = 0;
  friend constexpr bool operator==(Cycles a, Cycles b) { return a.value == b.value; }
  friend constexpr Cycles operator+(Cycles a, Cycles b) { return {a.value + b.value}; }
};

/// Simulated nanoseconds.
struct Nanos {
  double value = 0;
};

/// The one place where cycles become time: knows one engine's frequency.
class EngineClock {
 public:
  explicit EngineClock(double ghz) : ghz_(ghz) {}
  /// ns taken by `cycles` of this engine's clock.
  Nanos toNs(Cycles cycles) const { return {static_cast<double>(cycles.value) / ghz_}; }
  /// Whole cycles of this clock in `ns` (rounded to nearest), for time given in ns.
  Cycles toCycles(Nanos ns) const { return {static_cast<int64_t>(ns.value * ghz_ + 0.5)}; }
  double ghz() const { return ghz_; }

 private:
  double ghz_;
};

/// The clock of `engine` on `machine` (PE, DVE, ACT, POOL, or the base clock for Sync).
inline EngineClock engineClock(isa::Engine engine, const MachineConfig& machine) {
  switch (engine) {
    case isa::Engine::Tensor:
      return EngineClock(machine.peGhz);
    case isa::Engine::Vector:
      return EngineClock(machine.dveGhz);
    case isa::Engine::Scalar:
      return EngineClock(machine.actGhz);
    case isa::Engine::GpSimd:
      return EngineClock(machine.poolGhz);
    case isa::Engine::Sync:
      return EngineClock(machine.syncGhz);
  }
  return EngineClock(machine.syncGhz);
}

}  // namespace neuronsim::sim
