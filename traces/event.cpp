// Names of stall causes and counters, as they appear in traces and reports.
#include "traces/event.h"

#include <array>

namespace neuronsim::traces {

namespace {

constexpr std::array<std::string_view, 5> kStallNames{"none", "semaphore", "engine_busy",
                                                      "throttle", "access_conflict"};
constexpr std::array<std::string_view, 6> kCounterNames{
    "pe_utilization", "dma_gbps", "sbuf_bytes", "psum_bytes", "pending_dmas", "throttle"};

}  // namespace

std::string_view stallCauseName(StallCause cause) {
  auto i = static_cast<size_t>(cause);
  return i < kStallNames.size() ? kStallNames[i] : std::string_view("?");
}

std::string_view counterName(Counter counter) {
  auto i = static_cast<size_t>(counter);
  return i < kCounterNames.size() ? kCounterNames[i] : std::string_view("?");
}

}  // namespace neuronsim::traces
