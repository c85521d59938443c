// Semaphore registration, settledness from the signallers' frontiers, and waiter wake-ups.
#include "sim/core/semaphore_bank.h"

#include <algorithm>

#include "sim/cost/clock.h"
#include "sim/cost/compute_cost.h"

namespace neuronsim::sim {

SemaphoreBank::SemaphoreBank(const SemaphoreUsage& usage, const MachineConfig& machine)
    : handoff_(EngineClock(machine.syncGhz).toTicks(Cycles{machine.semaphoreHandoffCycles})),
      semaphores_(usage.signallers.size()) {
  std::array<Tick, isa::kNumEngines> latency{};
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<isa::Engine>(e);
    latency[static_cast<size_t>(e)] =
        engineClock(engine, machine).toTicks(pipelineLatency(engine, machine));
  }
  for (size_t sem = 0; sem < semaphores_.size(); ++sem) {
    semaphores_[sem].signallers = usage.signallers[sem];
    for (size_t e = 0; e < isa::kNumEngines; ++e) {
      const bool atRead = (usage.readSignallers[sem] >> e) & 1u;
      semaphores_[sem].lookahead[e] = (atRead ? Tick() : latency[e]) + handoff_;
    }
  }
}

uint32_t SemaphoreBank::wakeWaiters(Semaphore& s) {
  uint32_t woken = 0;
  for (size_t i = 0; i < s.waiters.size();) {
    const int64_t value = s.waiters[i].value;
    if (value == kAnyChange || s.timeline.firstReach(value).at != Tick::never()) {
      woken |= 1u << s.waiters[i].agent;
      s.waiters[i] = s.waiters.back();
      s.waiters.pop_back();
    } else {
      ++i;
    }
  }
  listening_ &= ~woken;
  return woken;
}

bool SemaphoreBank::settledLater(int32_t sem, Tick t) const {
  const Semaphore& s = semaphores_[static_cast<size_t>(sem)];
  for (uint32_t rest = s.signallers; rest != 0; rest &= rest - 1) {
    const int agent = __builtin_ctz(rest);
    if (agent >= isa::kNumEngines) return false;  // a DMA queue signals at SystemC time
    const Tick frontier = frontier_[static_cast<size_t>(agent)];
    if (frontier != Tick::never() && frontier + s.lookahead[static_cast<size_t>(agent)] < t)
      return false;
  }
  return true;
}

Tick SemaphoreBank::blockedStartBound(int agent, Tick frontier, Tick now) const {
  const Blocked& b = blocked_[static_cast<size_t>(agent)];
  const Semaphore& s = semaphores_[static_cast<size_t>(b.sem)];
  Tick reach = s.timeline.firstReach(b.value).at;
  for (uint32_t rest = s.signallers; rest != 0; rest &= rest - 1) {
    const int signaller = __builtin_ctz(rest);
    const Tick f = frontier_[static_cast<size_t>(signaller)];
    if (signaller >= isa::kNumEngines)  // a DMA queue registers at the SystemC time it fires
      reach = std::min(reach, now);
    else if (f != Tick::never())
      reach = std::min(reach, f + s.lookahead[static_cast<size_t>(signaller)]);
  }
  return std::max(frontier, reach);
}

void SemaphoreBank::removeWaiter(int agent, int32_t sem) {
  std::vector<Waiter>& waiters = waitersOf(sem);
  waiters.erase(std::remove_if(waiters.begin(), waiters.end(),
                               [&](const Waiter& w) { return w.agent == agent; }),
                waiters.end());
  listening_ &= ~(1u << agent);
}

}  // namespace neuronsim::sim
