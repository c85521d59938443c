#pragma once
// The simulated-time horizon: a run that passes it stops with an error instead of spinning
// (a machine parameter out of scale, or a program that never ends).

#include <cstdint>
#include <string_view>

#include "traces/tick.h"

namespace neuronsim::sim {

/// One hour of simulated time: orders of magnitude above any kernel run, far below the
/// range of a 64-bit picosecond count.
inline constexpr traces::Tick kSimulatedTimeLimit = traces::Tick::fromPs(3'600'000'000'000'000);

/// Throws neuronsim::Error saying that `what` (e.g. "instruction 12 (nc_matmul on tensor)")
/// would end at `t`, past kSimulatedTimeLimit.
[[noreturn]] void throwTimeLimit(traces::Tick t, std::string_view what);

}  // namespace neuronsim::sim
