#pragma once
// The bridge between simulated ticks and the SystemC kernel's time (resolution 1 ps), for the
// SystemC shells only.

#include <systemc>

#include "traces/tick.h"

namespace neuronsim::sim {

/// The SystemC kernel's now.
inline traces::Tick scNow() {
  return traces::Tick::fromPs(static_cast<int64_t>(sc_core::sc_time_stamp().value()));
}

/// Delay from now until `t` (zero when `t` is not later).
inline sc_core::sc_time delayUntil(traces::Tick t) {
  const traces::Tick now = scNow();
  return t > now ? sc_core::sc_time::from_value(static_cast<uint64_t>((t - now).ps()))
                 : sc_core::SC_ZERO_TIME;
}

/// Suspends the calling thread until `t`; returns at once when `t` is not later than now.
inline void waitUntil(traces::Tick t) {
  if (t > scNow()) sc_core::wait(delayUntil(t));
}

}  // namespace neuronsim::sim
