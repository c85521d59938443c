#pragma once
// Strong time types: engine cycles vs simulated ticks (ps), converted only through an
// EngineClock.

#include <cmath>
#include <cstdint>

#include "isa/instruction.h"
#include "sim/machine_config.h"
#include "traces/tick.h"

namespace neuronsim::sim {

using traces::Tick;

/// A count of one engine's clock cycles.
struct Cycles {
  int64_t value = 0;
  friend constexpr bool operator==(Cycles a, Cycles b) { return a.value == b.value; }
  friend constexpr Cycles operator+(Cycles a, Cycles b) { return {a.value + b.value}; }
};

/// The one place where cycles become time: knows one engine's frequency.
class EngineClock {
 public:
  explicit EngineClock(double ghz) : ghz_(ghz) {}
  /// Time taken by `cycles` of this clock, rounded to the nearest picosecond (saturating at
  /// 2^62 ps, past the simulated-time limit, so sums cannot overflow).
  Tick toTicks(Cycles cycles) const {
    const double ps = static_cast<double>(cycles.value) * 1000.0 / ghz_;
    return Tick::fromPs(ps < kSaturatePs ? static_cast<int64_t>(ps + 0.5) : int64_t{1} << 62);
  }
  /// Whole cycles of this clock in `time` (rounded to nearest), for costs given in time.
  Cycles toCycles(Tick time) const {
    return {std::llround(static_cast<double>(time.ps()) * ghz_ / 1000.0)};
  }
  double ghz() const { return ghz_; }

 private:
  static constexpr double kSaturatePs = 4.6e18;
  double ghz_;
};

/// The clock of `engine` on `machine` (PE, DVE, ACT, POOL, or the base clock for Sync).
inline EngineClock engineClock(isa::Engine engine, const MachineConfig& machine) {
  switch (engine) {
    case isa::Engine::Tensor:
      return EngineClock(machine.geometry.peGhz);
    case isa::Engine::Vector:
      return EngineClock(machine.geometry.vectorGhz);
    case isa::Engine::Scalar:
      return EngineClock(machine.geometry.scalarGhz);
    case isa::Engine::GpSimd:
      return EngineClock(machine.geometry.gpsimdGhz);
    case isa::Engine::Sync:
      return EngineClock(machine.syncGhz);
  }
  return EngineClock(machine.syncGhz);
}

}  // namespace neuronsim::sim
