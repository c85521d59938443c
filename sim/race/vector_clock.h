#pragma once
// Vector clocks over the agents that run instructions: the 5 engines and up to 16 DMA queues.

#include <algorithm>
#include <array>
#include <cstdint>

#include "isa/geometry.h"
#include "isa/instruction.h"

namespace neuronsim::sim {

inline constexpr int kNumAgents = isa::kNumEngines + isa::kMaxDmaQueues;

/// Agent ids: engines first (isa::Engine order), then DMA queues.
inline int engineAgent(isa::Engine engine) {
  return static_cast<int>(engine);
}
inline int queueAgent(int32_t queue) {
  return isa::kNumEngines + queue;
}

/// Entry a = the latest epoch of agent a known to happen before.
using VectorClock = std::array<uint32_t, kNumAgents>;

inline void joinInto(VectorClock& into, const VectorClock& other) {
  for (int i = 0; i < kNumAgents; ++i) into[i] = std::max(into[i], other[i]);
}

}  // namespace neuronsim::sim
