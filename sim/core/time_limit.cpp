// The simulated-time horizon check.
#include "sim/core/time_limit.h"

#include <fmt/format.h>

#include "isa/error.h"

namespace neuronsim::sim {

void throwTimeLimit(traces::Tick t, std::string_view what) {
  throw Error(
      fmt::format("{} would end past the simulated-time limit of {} s (at {:f} s): a machine "
                  "parameter is out of scale, or the program never ends",
                  what, kSimulatedTimeLimit.ps() / 1'000'000'000'000, t.ns() / 1e9));
}

}  // namespace neuronsim::sim
