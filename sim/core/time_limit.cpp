// The simulated-time horizon check.
#include "sim/core/time_limit.h"

#include "isa/error.h"
#include "sim/core/text.h"

namespace neuronsim::sim {

void throwTimeLimit(traces::Tick t, std::string_view what) {
  throw Error(concat(what, " would end past the simulated-time limit of ",
                     std::to_string(kSimulatedTimeLimit.ps() / 1'000'000'000'000), " s (at ",
                     std::to_string(t.ns() / 1e9),
                     " s): a machine parameter is out of scale, or the program never ends"));
}

}  // namespace neuronsim::sim
