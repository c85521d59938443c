// The engine sequencer process: waits, ports, timing, semantics, signals.
#include "sim/engines/engine_module.h"

#include <fmt/format.h>

#include "isa/error.h"
#include "isa/semantics.h"
#include "sim/core/systemc_time.h"
#include "sim/core/time_limit.h"
#include "sim/dma/dma_module.h"

namespace neuronsim::sim {

using traces::StallCause;

EngineModule::EngineModule(sc_core::sc_module_name name, CoreContext& context, isa::Engine engine,
                           LargeVector<int64_t> stream)
    : sc_core::sc_module(name),
      ctx_(context),
      engine_(engine),
      agent_(engineAgent(engine)),
      arbitrated_(context.arbiter().enabled() &&
                  (engine == isa::Engine::Vector || engine == isa::Engine::Scalar ||
                   engine == isa::Engine::GpSimd)),
      timing_(makeEngineTiming(engine, context.machine())),
      stream_(context.program(), context.machine(), std::move(stream), context.races() != nullptr) {
  if (arbitrated_ && !stream_.finished()) ctx_.arbiter().next(engine_, stream_.headIndex());
  SC_THREAD(run);
}

void EngineModule::run() {
  try {
    while (!stream_.finished()) {
      step(stream_.head());
      stream_.pop();
    }
    ctx_.semaphores().advanceFrontier(agent_, Tick::never());
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (const Error&) {
    ctx_.fail(std::current_exception());
  } catch (const std::exception& e) {
    // A malformed instruction the caller did not validate: name it instead of crashing.
    const int64_t index = headInstruction();
    const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
    ctx_.fail(std::make_exception_ptr(
        Error(fmt::format("instruction {} ({} on {}): {}", index, isa::opcodeName(inst.opcode),
                          isa::engineName(engine_), e.what()))));
  }
}

Tick EngineModule::awaitSemaphore(const isa::SemWait& wait, Tick t, Stall& stall) {
  SemaphoreBank& bank = ctx_.semaphores();
  while (true) {
    const SemaphoreTimeline::Reach reach = bank.firstReach(wait.sem, wait.value);
    if (reach.at <= t) break;
    blockedOn_ = &wait;
    bank.setBlocked(agent_, wait.sem, wait.value);
    if (reach.at == Tick::never()) {
      bank.addWaiter(agent_, wait.sem, wait.value);
      sc_core::wait(ctx_.wakeEvent(agent_));
      continue;
    }
    // Registered but later than t: final once no signaller can still land an earlier one;
    // else wait for that time (when every earlier one is registered) or for a change.
    if (!bank.settled(wait.sem, reach.at, scNow())) {
      bank.addChangeWaiter(agent_, wait.sem);
      sc_core::wait(delayUntil(reach.at), ctx_.wakeEvent(agent_));
      bank.removeWaiter(agent_, wait.sem);
      continue;
    }
    t = reach.at;
    stall = {StallCause::Semaphore, wait.sem, wait.value, reach.by};
    break;
  }
  if (blockedOn_) bank.setBlocked(agent_, -1, 0);
  blockedOn_ = nullptr;
  return t;
}

Tick EngineModule::awaitPorts(const DecodedInstruction& inst, Tick t, Stall& stall) {
  using Verdict = PortArbiter::Verdict;
  PortArbiter& arbiter = ctx_.arbiter();
  SemaphoreBank& bank = ctx_.semaphores();
  bool posted = false;   // rivals know this request (index, and t as the frontier)
  bool yielded = false;  // one delta cycle given at t to rivals that wake at t
  while (true) {
    const Tick now = scNow();
    const PortArbiter::Grant grant =
        arbiter.grant(engine_, inst.usesSbuf, inst.usesPsum, inst.index, t, [&](isa::Engine rival) {
          return std::max(now, bank.nextStartBound(engineAgent(rival), now));
        });
    const bool moved = grant.at != t;
    if (moved) stall = {StallCause::AccessConflict, -1, 0, -1};
    t = grant.at;
    if (grant.verdict == Verdict::Granted || (grant.verdict == Verdict::Tie && yielded)) return t;
    if (!posted || moved) {  // tell rivals only what changed, so that waiters do not ping-pong
      arbiter.wait(engine_, inst.index);
      bank.advanceFrontier(agent_, t);
      ctx_.portsChanged();
      posted = true;
    }
    // Before t a rival may still start first: SystemC time reaching t settles that (every
    // engine runs at or after SystemC time). At t: the waiting rival with priority claims
    // first; a rival that wakes at t gets one delta cycle to make its request.
    if (t > now) {
      sc_core::wait(delayUntil(t));
    } else if (grant.verdict == Verdict::Behind) {
      ctx_.awaitPortChange();
    } else {
      sc_core::wait(sc_core::SC_ZERO_TIME);
      yielded = true;
    }
  }
}

void EngineModule::step(const DecodedInstruction& inst) {
  using Failure = DecodedInstruction::Failure;
  if (inst.failure == Failure::Operands) std::rethrow_exception(inst.error);
  const int64_t index = inst.index;
  RaceDetector* races = ctx_.races();

  // 1. Semaphore waits.
  if (arbitrated_) ctx_.arbiter().next(engine_, index);
  Stall stall;
  Tick t = timing_->head();
  for (const isa::SemWait& w : inst.waits) t = awaitSemaphore(w, t, stall);
  ctx_.semaphores().advanceFrontier(agent_, t);
  if (races) {
    for (const isa::SemWait& w : inst.waits) races->acquire(agent_, w.sem, w.value);
    races->tick(agent_);
  }

  // 2. Timing: interlock, NC-v2 ports, issue (a DMA trigger syncs: the DMA model takes posts
  //    in time order).
  Issue issue;
  if (inst.dma) {
    waitUntil(t);
    issue = timing_->trigger(t, ctx_.dma().triggerTime(index), stall);
  } else {
    t = timing_->afterInterlock(inst.operands, t, stall);
    if (arbitrated_) t = awaitPorts(inst, t, stall);
    if (inst.failure == Failure::Cost) std::rethrow_exception(inst.error);
    issue = timing_->issue(inst, inst.operands.front().box, t, stall);
    if (arbitrated_) {
      ctx_.arbiter().claim(engine_, inst.usesSbuf, inst.usesPsum, issue.end);
      ctx_.portsChanged();
    }
  }
  if (issue.complete > kSimulatedTimeLimit)
    throwTimeLimit(issue.complete,
                   fmt::format("instruction {} ({} on {})", index, isa::opcodeName(inst.opcode),
                               isa::engineName(engine_)));

  // 3. Races, signals, semantics, DMA trigger. @read signals release the clock from before
  //    this instruction: none of its accesses is finished when it starts reading.
  const VectorClock* vc = races ? &races->clock(agent_) : nullptr;
  if (!inst.dma) {
    const Tick handoff = ctx_.semaphores().handoff();
    if (races) races->access(agent_, index, inst.operands);
    if (inst.readSignal) {
      VectorClock before = vc ? *vc : VectorClock{};
      --before[static_cast<size_t>(agent_)];
      ctx_.signal(inst.signals, index, isa::SignalAt::Read, issue.start + handoff,
                  vc ? &before : nullptr);
    }
    ctx_.signal(inst.signals, index, isa::SignalAt::Complete, issue.complete + handoff, vc);
  }
  if (isa::MemoryState* memory = ctx_.memory()) isa::execute(*inst.inst, index, *memory);
  if (inst.dma) ctx_.dma().post(index, issue.start, vc, inst.operands);
  ctx_.recorder().instruction(inst, issue);
  ctx_.semaphores().advanceFrontier(agent_, timing_->head());
}

}  // namespace neuronsim::sim
