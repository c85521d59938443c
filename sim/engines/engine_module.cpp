// The engine sequencer process: waits, ports, timing, semantics, signals.
#include "sim/engines/engine_module.h"

#include <algorithm>

#include "isa/error.h"
#include "isa/semantics.h"
#include "sim/core/systemc_time.h"
#include "sim/core/text.h"
#include "sim/core/time_limit.h"
#include "sim/dma/dma_module.h"

namespace neuronsim::sim {

using traces::StallCause;

EngineModule::EngineModule(sc_core::sc_module_name name, CoreContext& context, isa::Engine engine,
                           std::vector<int64_t> stream)
    : sc_core::sc_module(name),
      ctx_(context),
      engine_(engine),
      agent_(engineAgent(engine)),
      lockstep_(context.arbiter().enabled() &&
                (engine == isa::Engine::Vector || engine == isa::Engine::Scalar ||
                 engine == isa::Engine::GpSimd)),
      timing_(makeEngineTiming(engine, context.machine())),
      stream_(std::move(stream)) {
  SC_THREAD(run);
}

namespace {

/// Asks the cache for what step() reads of an instruction: with `heap`, the arrays its vectors
/// point to (the object itself must be cached by then), else the object. Instructions are
/// large and scattered on the heap; an engine otherwise stalls on each one in turn.
void prefetch(const isa::Instruction& inst, bool heap) {
  if (!heap) {
    const char* bytes = reinterpret_cast<const char*>(&inst);
    for (size_t line = 0; line < sizeof(isa::Instruction); line += 64)
      __builtin_prefetch(bytes + line);
    return;
  }
  __builtin_prefetch(inst.dst.dims.data());
  __builtin_prefetch(inst.srcs.data());
  __builtin_prefetch(inst.srcs.data() + 1);
  __builtin_prefetch(inst.waits.data());
  __builtin_prefetch(inst.signals.data());
}

}  // namespace

void EngineModule::run() {
  try {
    const std::vector<isa::Instruction>& instructions = ctx_.program().instructions;
    while (next_ < stream_.size()) {
      if (next_ + 2 < stream_.size())
        prefetch(instructions[static_cast<size_t>(stream_[next_ + 2])], false);
      if (next_ + 1 < stream_.size()) {
        const isa::Instruction& following = instructions[static_cast<size_t>(stream_[next_ + 1])];
        prefetch(following, true);
        for (const isa::AccessPattern& src : following.srcs) __builtin_prefetch(src.dims.data());
      }
      step(stream_[next_]);
      ++next_;
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
        Error(concat("instruction ", std::to_string(index), " (", isa::opcodeName(inst.opcode),
                     " on ", isa::engineName(engine_), "): ", e.what()))));
  }
}

Tick EngineModule::awaitSemaphore(const isa::SemWait& wait, Tick t, Stall& stall) {
  SemaphoreBank& bank = ctx_.semaphores();
  while (true) {
    const SemaphoreTimeline::Reach reach = bank.firstReach(wait.sem, wait.value);
    if (reach.at <= t) break;
    blockedOn_ = &wait;
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
  blockedOn_ = nullptr;
  return t;
}

Tick EngineModule::awaitPorts(const OperandList& operands, Tick t, Stall& stall) {
  while (true) {
    waitUntil(t);
    const Tick freeAt = ctx_.arbiter().freeAt(engine_, operands.usesSbuf(), operands.usesPsum());
    if (freeAt <= t) return t;
    stall = {StallCause::AccessConflict, -1, 0, -1};
    t = freeAt;
  }
}

void EngineModule::step(int64_t index) {
  const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
  const OperandList operands(inst);
  RaceDetector* races = ctx_.races();
  const bool dma = isa::isDma(inst.opcode);

  // 1. Semaphore waits.
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
  ComputeCost cost;
  if (dma) {
    waitUntil(t);
    issue = timing_->trigger(t, ctx_.dma().triggerTime(index), stall);
  } else {
    t = timing_->afterInterlock(operands, t, stall);
    if (lockstep_) t = awaitPorts(operands, t, stall);
    cost = computeCost(inst, ctx_.machine());
    issue = timing_->issue(inst, index, operands, cost, t, stall);
    ctx_.arbiter().claim(engine_, operands.usesSbuf(), operands.usesPsum(), issue.end);
  }
  if (issue.complete > kSimulatedTimeLimit)
    throwTimeLimit(issue.complete,
                   concat("instruction ", std::to_string(index), " (", isa::opcodeName(inst.opcode),
                          " on ", isa::engineName(engine_), ")"));

  // 3. Races, signals, semantics, DMA trigger. @read signals release the clock from before
  //    this instruction: none of its accesses is finished when it starts reading.
  const VectorClock* vc = races ? &races->clock(agent_) : nullptr;
  if (!dma) {
    const Tick handoff = ctx_.semaphores().handoff();
    if (races) races->access(agent_, index, operands);
    const bool readSignal = std::any_of(inst.signals.begin(), inst.signals.end(),
                                        [](const auto& s) { return s.at == isa::SignalAt::Read; });
    if (readSignal) {
      VectorClock before = vc ? *vc : VectorClock{};
      --before[static_cast<size_t>(agent_)];
      ctx_.signal(inst, index, isa::SignalAt::Read, issue.start + handoff, vc ? &before : nullptr);
    }
    ctx_.signal(inst, index, isa::SignalAt::Complete, issue.complete + handoff, vc);
  }
  if (isa::MemoryState* memory = ctx_.memory()) isa::execute(inst, index, *memory);
  if (dma) ctx_.dma().post(index, issue.start, vc);
  ctx_.recorder().instruction(inst, index, operands, issue, cost);
  ctx_.semaphores().advanceFrontier(agent_, timing_->head());
}

}  // namespace neuronsim::sim
