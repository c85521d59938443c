// Semaphore registration, settledness from the signallers' frontiers, and waiter wake-ups.
#include "sim/core/semaphore_bank.h"

#include <algorithm>

#include "sim/cost/clock.h"
#include "sim/cost/compute_cost.h"

namespace neuronsim::sim {

SemaphoreBank::SemaphoreBank(const isa::Program& program, const MachineConfig& machine)
    : handoff_(EngineClock(machine.syncGhz).toTicks(Cycles{machine.semaphoreHandoffCycles})),
      semaphores_(program.semaphores.size()) {
  std::vector<std::array<bool, isa::kNumEngines>> readSignal(program.semaphores.size());
  for (const isa::Instruction& inst : program.instructions) {
    const bool dma = isa::isDma(inst.opcode);
    for (const isa::SemSignal& s : inst.signals) {
      const int agent = dma ? queueAgent(inst.dmaQueue) : engineAgent(inst.engine);
      semaphores_[static_cast<size_t>(s.sem)].signallers |= 1u << agent;
      if (!dma && s.at == isa::SignalAt::Read)
        readSignal[static_cast<size_t>(s.sem)][static_cast<size_t>(inst.engine)] = true;
    }
  }
  for (size_t sem = 0; sem < semaphores_.size(); ++sem) {
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const auto engine = static_cast<isa::Engine>(e);
      const Tick latency =
          readSignal[sem][static_cast<size_t>(e)]
              ? Tick()
              : engineClock(engine, machine).toTicks(pipelineLatency(engine, machine));
      semaphores_[sem].lookahead[static_cast<size_t>(e)] = latency + handoff_;
    }
  }
}

uint32_t SemaphoreBank::add(int32_t sem, Tick at, int64_t delta, int64_t by) {
  Semaphore& s = semaphores_[static_cast<size_t>(sem)];
  // Every later query comes from an engine at or after its frontier.
  Tick floor = Tick::never();
  for (int e = 0; e < isa::kNumEngines; ++e)
    floor = std::min(floor, frontier_[static_cast<size_t>(e)]);
  s.timeline.add(at, delta, by, floor);
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
  return woken;
}

bool SemaphoreBank::settled(int32_t sem, Tick t, Tick now) const {
  if (t <= now) return true;
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

void SemaphoreBank::removeWaiter(int agent, int32_t sem) {
  std::vector<Waiter>& waiters = waitersOf(sem);
  waiters.erase(std::remove_if(waiters.begin(), waiters.end(),
                               [&](const Waiter& w) { return w.agent == agent; }),
                waiters.end());
}

}  // namespace neuronsim::sim
