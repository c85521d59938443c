// The engine sequencers (waits, ports, timing, semantics, signals) and the threads driving them.
#include "sim/engines/engine_module.h"

#include <fmt/format.h>

#include <string>

#include "isa/error.h"
#include "isa/semantics.h"
#include "sim/core/systemc_time.h"
#include "sim/core/time_limit.h"
#include "sim/dma/dma_module.h"
#include "sim/engines/tensor_timing.h"

namespace neuronsim::sim {

using traces::StallCause;

EngineSequencer::EngineSequencer(CoreContext& context, isa::Engine engine,
                                 isa::LargeVector<int64_t> stream)
    : ctx_(context),
      engine_(engine),
      agent_(engineAgent(engine)),
      arbitrated_(context.arbiter().arbitrates(engine)),
      timing_(makeEngineTiming(engine, context.machine())),
      tensor_(engine == isa::Engine::Tensor ? static_cast<TensorTiming*>(timing_.get()) : nullptr),
      stream_(context.program(), context.machine(), std::move(stream), context.races() != nullptr,
              context.arbiter().psumRivalled(engine)) {
  if (arbitrated_ && !stream_.finished()) ctx_.arbiter().next(engine_, stream_.headIndex());
  if (stream_.finished()) ctx_.semaphores().advanceFrontier(agent_, Tick::never());
}

inline void EngineSequencer::stallOn(const isa::SemWait& wait, SemaphoreTimeline::Reach reach) {
  t_ = reach.at;
  stall_ = {StallCause::Semaphore, wait.sem, wait.value, reach.by};
}

inline bool EngineSequencer::passes(const isa::SemWait& wait, SemaphoreTimeline::Reach reach,
                                    Tick now, Resume& resume) {
  if (reach.at <= t_) return true;
  resume.wake = true;  // as awaitSemaphore() asks whenever the reach is later than t_
  if (reach.at == Tick::never() || !ctx_.semaphores().settled(wait.sem, reach.at, now))
    return false;
  stallOn(wait, reach);
  return true;
}

[[gnu::always_inline]] inline void EngineSequencer::blockOn(const isa::SemWait& wait, Tick reach,
                                                            Listen registered, Resume& resume) {
  SemaphoreBank& bank = ctx_.semaphores();
  blockedOn_ = &wait;
  bank.setBlocked(agent_, wait.sem, wait.value);
  // No increment reaches the value yet: wait for one that does; else for that time (when
  // every earlier increment is registered) or for a change.
  listen_ = reach == Tick::never() ? Listen::Value : Listen::Change;
  if (listen_ == Listen::Change) resume.at = std::min(resume.at, reach);
  if (registered == listen_) return;
  if (registered != Listen::None) bank.removeWaiter(agent_, wait.sem);
  // A semaphore that only this thread's engines signal wakes no one: the thread steps every
  // blocked sequencer again after another one issued.
  if ((bank.signallers(wait.sem) & ~threadAgents_) == 0) return;
  if (listen_ == Listen::Value)
    bank.addWaiter(agent_, wait.sem, wait.value);
  else
    bank.addChangeWaiter(agent_, wait.sem);
}

bool EngineSequencer::awaitSemaphore(const isa::SemWait& wait, SemaphoreTimeline::Reach reach,
                                     Tick now, Resume& resume) {
  SemaphoreBank& bank = ctx_.semaphores();
  // A wait registered before and not reported yet stays registered while it still applies.
  const Listen registered =
      listen_ != Listen::None && bank.listening(agent_) ? listen_ : Listen::None;
  if (reach.at > t_) {
    resume.wake = true;
    // Registered but later than t_: final once no signaller can still land an earlier one.
    if (reach.at == Tick::never() || !bank.settled(wait.sem, reach.at, now)) {
      blockOn(wait, reach.at, registered, resume);
      return false;
    }
    stallOn(wait, reach);
  }
  if (registered != Listen::None) bank.removeWaiter(agent_, wait.sem);
  listen_ = Listen::None;
  if (blockedOn_) bank.setBlocked(agent_, -1, 0);
  blockedOn_ = nullptr;
  return true;
}

[[gnu::always_inline]] inline bool EngineSequencer::awaitPorts(const DecodedInstruction& inst,
                                                               Tick now, Resume& resume,
                                                               bool& posted) {
  using Verdict = PortArbiter::Verdict;
  PortArbiter& arbiter = ctx_.arbiter();
  SemaphoreBank& bank = ctx_.semaphores();
  const PortArbiter::Grant grant =
      arbiter.grant(engine_, inst.usesSbuf, inst.psumBanks, inst.index, t_, [&](isa::Engine rival) {
        return std::max(now, bank.nextStartBound(engineAgent(rival), now));
      });
  const bool moved = grant.at != t_;
  if (moved) stall_ = {StallCause::AccessConflict, -1, 0, -1};
  t_ = grant.at;
  if (grant.verdict == Verdict::Granted || (grant.verdict == Verdict::Tie && yielded_)) return true;
  if (!posted_ || moved) {  // tell rivals only what changed, so that waiters do not ping-pong
    arbiter.wait(engine_, inst.index);
    bank.advanceFrontier(agent_, t_);
    posted_ = true;
    posted = true;
  }
  // Before t_ a rival may still start first: SystemC time reaching t_ settles that (every
  // engine runs at or after SystemC time). At t_: the waiting rival with priority claims
  // first (it shares this thread); a rival that wakes at t_ gets one delta cycle to make its
  // request.
  if (t_ > now) {
    resume.at = std::min(resume.at, t_);
  } else if (grant.verdict != Verdict::Behind) {
    resume.delta = true;
    yieldAsked_ = true;
  }
  return false;
}

[[gnu::always_inline]] inline void EngineSequencer::finish(const DecodedInstruction& inst,
                                                           const Issue& issue) {
  const int64_t index = inst.index;
  if (issue.complete > kSimulatedTimeLimit)
    throwTimeLimit(issue.complete,
                   fmt::format("instruction {} ({} on {})", index, isa::opcodeName(inst.opcode),
                               isa::engineName(engine_)));

  // 3. Races, signals, semantics, DMA trigger. @read signals release the clock from before
  //    this instruction: none of its accesses is finished when it starts reading.
  RaceDetector* races = ctx_.races();
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
  stream_.pop();
  phase_ = Phase::Head;
  ctx_.semaphores().advanceFrontier(agent_, finished() ? Tick::never() : timing_->head());
}

[[gnu::always_inline]] inline Tick EngineSequencer::pastWaits(const DecodedInstruction& inst,
                                                              Tick t, Stall& stall) {
  ctx_.semaphores().advanceFrontier(agent_, t);
  if (RaceDetector* races = ctx_.races()) {
    for (const isa::SemWait& w : inst.waits) races->acquire(agent_, w.sem, w.value);
    races->tick(agent_);
  }
  return inst.dma ? t : timing_->afterInterlock(inst.operands, t, stall);
}

template <bool kPorts>
[[gnu::always_inline]] inline void EngineSequencer::issueCompute(const DecodedInstruction& inst,
                                                                 Tick t, const Stall& stall) {
  if (inst.failure == DecodedInstruction::Failure::Cost) std::rethrow_exception(inst.error);
  const Issue issue = tensor_ ? tensor_->issue(inst, inst.operands.front().box, t, stall)
                              : timing_->issue(inst, inst.operands.front().box, t, stall);
  if (kPorts) ctx_.arbiter().claim(engine_, inst.usesSbuf, inst.psumBanks, issue.end);
  finish(inst, issue);
}

// Inlined into advance(), its one caller: one call per pass instead of one per instruction.
template <bool kPorts>
[[gnu::always_inline]] inline EngineSequencer::Progress EngineSequencer::step(Tick now,
                                                                              Resume& resume) {
  yieldAsked_ = false;
  if (listen_ == Listen::Value && ctx_.semaphores().listening(agent_)) {
    resume.wake = true;  // the value it waits for is not registered yet
    return Progress::Blocked;
  }
  const DecodedInstruction& inst = stream_.head();
  // The start and stall so far: in locals while the instruction runs straight through.
  Tick t;
  Stall stall;
  bool straight = false;
  if (phase_ == Phase::Head) {
    if (inst.failure == DecodedInstruction::Failure::Operands) std::rethrow_exception(inst.error);
    if (kPorts) ctx_.arbiter().next(engine_, inst.index);
    // The waits that hold as passes() tells; a compute instruction that needs no port grant
    // and whose waits all hold issues without any of the members below.
    SemaphoreBank& bank = ctx_.semaphores();
    t = timing_->head();
    size_t i = 0;
    for (; i < inst.waits.size(); ++i) {
      const isa::SemWait& w = inst.waits[i];
      const SemaphoreTimeline::Reach reach = bank.firstReach(w.sem, w.value);
      if (reach.at <= t) continue;
      resume.wake = true;
      if (reach.at == Tick::never() || !bank.settled(w.sem, reach.at, now)) {
        t_ = t;
        stall_ = stall;
        nextWait_ = i;
        phase_ = Phase::Waits;
        blockOn(w, reach.at, Listen::None, resume);  // no wait is registered at the head
        return Progress::Blocked;
      }
      t = reach.at;
      stall = {StallCause::Semaphore, w.sem, w.value, reach.by};
    }
    if (!inst.dma &&
        (!kPorts || !ctx_.arbiter().contends(engine_, inst.usesSbuf, inst.psumBanks))) {
      t = pastWaits(inst, t, stall);
      straight = true;
    } else {
      t_ = t;
      stall_ = stall;
      nextWait_ = i;
      phase_ = Phase::Waits;
    }
  }

  if (!straight) {
    // 1. Semaphore waits (the one it blocked on last first).
    if (phase_ == Phase::Waits) {
      SemaphoreBank& bank = ctx_.semaphores();
      for (size_t i = nextWait_; i < inst.waits.size(); ++i) {
        const isa::SemWait& w = inst.waits[i];
        const SemaphoreTimeline::Reach reach = bank.firstReach(w.sem, w.value);
        if (listen_ == Listen::None && !blockedOn_ && passes(w, reach, now, resume)) continue;
        if (!awaitSemaphore(w, reach, now, resume)) {
          nextWait_ = i;
          return Progress::Blocked;
        }
      }
      t_ = pastWaits(inst, t_, stall_);
      posted_ = yielded_ = false;
      phase_ = inst.dma ? Phase::Trigger : Phase::Ports;
    }

    // 2. Timing: NC-v2 ports, issue (a DMA trigger syncs: the DMA model takes posts in time
    //    order).
    if (phase_ == Phase::Trigger) {
      if (t_ > now) {
        resume.at = std::min(resume.at, t_);
        return Progress::Blocked;
      }
      finish(inst, timing_->trigger(t_, ctx_.dma().triggerTime(inst.index), stall_));
      return Progress::Issued;
    }
    bool posted = false;
    if (kPorts && !awaitPorts(inst, now, resume, posted))
      return posted ? Progress::Changed : Progress::Blocked;
    t = t_;
    stall = stall_;
  }
  issueCompute<kPorts>(inst, t, stall);
  return Progress::Issued;
}

template <bool kPorts>
bool EngineSequencer::advanceWith(Tick now, Resume& resume) {
  bool changed = false;
  while (!finished()) {
    const Progress p = step<kPorts>(now, resume);
    changed = changed || p != Progress::Blocked;
    if (p != Progress::Issued) break;
  }
  return changed;
}

bool EngineSequencer::advance(Tick now, Resume& resume) {
  return arbitrated_ ? advanceWith<true>(now, resume) : advanceWith<false>(now, resume);
}

EngineModule::EngineModule(sc_core::sc_module_name name, CoreContext& context,
                           std::vector<EngineSequencer*> sequencers)
    : sc_core::sc_module(name), ctx_(context), sequencers_(std::move(sequencers)) {
  for (const EngineSequencer* s : sequencers_) {
    agents_ |= 1u << engineAgent(s->engine());
    if (sequencers_.size() > 1) wake_ |= ctx_.wakeEvent(engineAgent(s->engine()));
  }
  for (EngineSequencer* s : sequencers_) s->drivenWith(agents_);
  SC_THREAD(run);
}

void EngineModule::await(const Resume& resume) {
  if (resume.delta) {
    sc_core::wait(sc_core::SC_ZERO_TIME);
    for (EngineSequencer* s : sequencers_) s->yielded();
    return;
  }
  if (!resume.wake && resume.at != Tick::never()) {
    sc_core::wait(delayUntil(resume.at));
  } else if (sequencers_.size() == 1) {
    sc_core::sc_event& wake = ctx_.wakeEvent(engineAgent(sequencers_.front()->engine()));
    if (resume.at == Tick::never())
      sc_core::wait(wake);
    else
      sc_core::wait(delayUntil(resume.at), wake);
  } else if (resume.at == Tick::never()) {
    sc_core::wait(wake_);
  } else {
    sc_core::wait(delayUntil(resume.at), wake_);
  }
}

void EngineModule::run() {
  EngineSequencer* current = nullptr;
  try {
    while (true) {
      // One pass: each sequencer as far as it goes. A sequencer that blocked before another
      // one issued or posted a request tries again before the thread waits.
      ctx_.setRunning(agents_);
      Resume resume;
      const Tick now = scNow();
      bool blocked = false, stale = false;
      for (EngineSequencer* s : sequencers_) {
        current = s;
        if (s->advance(now, resume)) stale = stale || blocked;
        blocked = blocked || !s->finished();
      }
      if (!blocked) break;
      if (stale) continue;
      ctx_.setRunning(0);
      await(resume);
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (const Error&) {
    ctx_.fail(std::current_exception());
  } catch (const std::exception& e) {
    // A malformed instruction the caller did not validate: name it instead of crashing.
    const int64_t index = current->headInstruction();
    const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
    ctx_.fail(std::make_exception_ptr(
        Error(fmt::format("instruction {} ({} on {}): {}", index, isa::opcodeName(inst.opcode),
                          isa::engineName(current->engine()), e.what()))));
  }
  ctx_.setRunning(0);
}

std::vector<std::unique_ptr<EngineModule>> engineThreads(
    CoreContext& context, const std::vector<std::unique_ptr<EngineSequencer>>& sequencers,
    bool together) {
  std::vector<std::unique_ptr<EngineModule>> threads;
  std::vector<EngineSequencer*> ports, all;
  for (const auto& s : sequencers) {
    if (together)
      all.push_back(s.get());
    else if (s->arbitrated())
      ports.push_back(s.get());
    else
      threads.push_back(
          std::make_unique<EngineModule>(std::string(isa::engineName(s->engine())).c_str(), context,
                                         std::vector<EngineSequencer*>{s.get()}));
  }
  if (!ports.empty())
    threads.push_back(std::make_unique<EngineModule>("ports", context, std::move(ports)));
  if (!all.empty())
    threads.push_back(std::make_unique<EngineModule>("engines", context, std::move(all)));
  return threads;
}

}  // namespace neuronsim::sim
