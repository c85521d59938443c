// The engine sequencer process: waits, interlocks, port conflicts, cost, semantics, signals.
#include "sim/engines/engine_module.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "isa/error.h"
#include "isa/semantics.h"
#include "sim/core/text.h"
#include "sim/cost/compute_cost.h"
#include "sim/cost/operand_traits.h"
#include "sim/dma/dma_module.h"

namespace neuronsim::sim {

using traces::StallCause;

EngineModule::EngineModule(sc_core::sc_module_name name, CoreContext& context, isa::Engine engine,
                           std::vector<int64_t> stream)
    : sc_core::sc_module(name),
      ctx_(context),
      engine_(engine),
      clock_(engineClock(engine, context.machine)),
      stream_(std::move(stream)),
      agent_(engineAgent(engine)),
      lockstep_(context.arbiter.enabled() &&
                (engine == isa::Engine::Vector || engine == isa::Engine::Scalar ||
                 engine == isa::Engine::GpSimd)),
      throttle_(context.machine) {
  SC_THREAD(run);
}

void EngineModule::run() {
  try {
    while (next_ < stream_.size()) {
      step(stream_[next_]);
      ++next_;
    }
    if (engine_ == isa::Engine::Tensor && ctx_.sink && lastPeStartNs_ >= 0)
      ctx_.sink->counter({traces::Counter::PeUtilization, lastPeEndNs_, 0});
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (const Error&) {
    ctx_.fail(std::current_exception());
  } catch (const std::exception& e) {
    // A malformed instruction the caller did not validate: name it instead of crashing.
    const int64_t index = headInstruction();
    const isa::Instruction& inst = ctx_.program.instructions[index];
    ctx_.fail(std::make_exception_ptr(
        Error(concat("instruction ", std::to_string(index), " (", isa::opcodeName(inst.opcode),
                     " on ", isa::engineName(engine_), "): ", e.what()))));
  }
}

void EngineModule::pushInFlight(const InFlight& entry) {
  while (ringSize_ > 0 && ring_[ringHead_].completeNs <= local_) {
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
  if (ringSize_ == kRing) {  // deeper than modelled: forget the oldest
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
  ring_[(ringHead_ + ringSize_) % kRing] = entry;
  ++ringSize_;
}

void EngineModule::awaitSemaphore(const isa::SemWait& wait, Stall& stall) {
  Semaphore& sem = ctx_.semaphores[wait.sem];
  SemaphoreTimeline::Reach reach = sem.timeline.firstReach(wait.value);
  if (reach.ns <= local_) return;
  syncToLocal();
  blockedOn_ = &wait;
  while (true) {
    reach = sem.timeline.firstReach(wait.value);
    if (reach.ns <= nowNs() + 1e-6) break;
    if (reach.ns == SemaphoreTimeline::kNever)
      sc_core::wait(sem.changed);
    else
      sc_core::wait(delayUntilNs(reach.ns), sem.changed);
  }
  blockedOn_ = nullptr;
  // A folded (settled) increment has no time left: it landed no later than now.
  local_ = std::max(local_, reach.ns == -SemaphoreTimeline::kNever ? nowNs() : reach.ns);
  stall = {StallCause::Semaphore, wait.sem, wait.value, reach.by};
}

double EngineModule::interlockUntil(const isa::Instruction& inst, int64_t& by) const {
  std::array<Footprint, 8>
      reads;  // a validated instruction reads at most 2 srcs, bias, 3 scalar vectors
  size_t numReads = 0;
  forEachOperand(inst, [&](const isa::AccessPattern& ap, bool write) {
    if (!write && numReads < reads.size()) reads[numReads++] = footprintOf(ap);
  });
  double until = 0;
  const double now = local_;
  for (size_t i = 0; i < ringSize_; ++i) {
    const InFlight& f = ring_[(ringHead_ + i) % kRing];
    if (f.completeNs <= now) continue;
    bool hit = false;
    for (size_t r = 0; r < numReads && !hit; ++r) hit = boxesOverlap(reads[r], f.dst);
    if (hit && f.completeNs > until) {
      until = f.completeNs;
      by = f.index;
    }
  }
  return until;
}

double EngineModule::tensorEnd(const isa::Instruction& inst, double start, bool stalled,
                               int64_t issueCycles, int64_t lsCycles) {
  const isa::AccessPattern& stationary = inst.srcs.at(0);
  const bool changed = !lastStationary_ || !(*lastStationary_ == stationary);
  double mmStart = start;
  if (changed) {
    // LoadStationary runs in the background of the previous matmul when this instruction was
    // already waiting at the head of the stream; otherwise it is exposed (P1).
    const double lsNs = clock_.toNs(Cycles{lsCycles}).value;
    const double lsStart = !stalled && lastPeStartNs_ >= 0 ? lastPeStartNs_ : start;
    mmStart = std::max(start, lsStart + lsNs);
  }
  lastStationary_ = &stationary;
  throttle_.beginAt(mmStart);
  const double end = throttle_.endFor(mmStart, clock_.toNs(Cycles{issueCycles}).value);
  throttle_.recordBusy(mmStart, end);
  if (ctx_.sink) {
    if (lastPeStartNs_ >= 0 && start > lastPeEndNs_ + 1e-6)
      ctx_.sink->counter({traces::Counter::PeUtilization, lastPeEndNs_, 0});
    if (ctx_.machine.peThrottle)
      ctx_.sink->counter({traces::Counter::Throttle, mmStart, 100.0 * throttle_.rateAt(mmStart)});
  }
  lastPeStartNs_ = mmStart;
  lastPeEndNs_ = end;
  return end;
}

void EngineModule::step(int64_t index) {
  const isa::Instruction& inst = ctx_.program.instructions[index];
  const double readyNs = local_;
  Stall stall;
  if (lockstep_) syncToLocal();

  // 1. Semaphore waits.
  for (const isa::SemWait& w : inst.waits) awaitSemaphore(w, stall);
  if (ctx_.races) {
    for (const isa::SemWait& w : inst.waits) ctx_.races->acquire(agent_, w.sem, w.value);
    ctx_.races->tick(agent_);
  }

  const bool dmaInst = isa::isDma(inst.opcode);
  // 2. Same-engine read-after-write interlock on results still in the pipeline.
  if (!dmaInst && engine_ != isa::Engine::Tensor && ringSize_ > 0) {
    int64_t by = -1;
    const double until = interlockUntil(inst, by);
    if (until > local_) {
      if (stall.cause == StallCause::None) stall = {StallCause::EngineBusy, -1, 0, by};
      local_ = until;
    }
  }

  // 3. NC-v2 SBUF/PSUM port conflicts (lockstep: SystemC now is local time here).
  bool usesSbuf = false, usesPsum = false;
  if (lockstep_ && !dmaInst) {
    forEachOperand(inst, [&](const isa::AccessPattern& ap, bool) {
      usesSbuf = usesSbuf || ap.space == isa::Space::Sbuf;
      usesPsum = usesPsum || ap.space == isa::Space::Psum;
    });
    while (true) {
      syncToLocal();
      const double freeAt = ctx_.arbiter.freeAt(engine_, usesSbuf, usesPsum);
      if (freeAt <= local_) break;
      if (stall.cause == StallCause::None) stall = {StallCause::AccessConflict, -1, 0, -1};
      local_ = freeAt;
    }
  }
  if (dmaInst) syncToLocal();

  // 4. Duration.
  const double start = local_;
  double end = start;
  double latencyNs = 0;
  int64_t cycles = 0;
  ComputeCost cost;
  if (dmaInst) {
    const double triggerNs = ctx_.dma->triggerNs(index);
    end = start + triggerNs;
    cycles = clock_.toCycles(Nanos{triggerNs}).value;
  } else {
    cost = computeCost(inst, ctx_.machine);
    cycles = cost.issue.value;
    latencyNs = clock_.toNs(cost.latency).value;
    if (engine_ == isa::Engine::Tensor) {
      end = tensorEnd(inst, start, stall.cause != StallCause::None, cost.issue.value,
                      cost.loadStationary.value);
      if (lastPeStartNs_ > start && stall.cause == StallCause::None)
        stall.cause = StallCause::EngineBusy;
    } else {
      end = start + clock_.toNs(cost.issue).value;
    }
  }
  ctx_.arbiter.claim(engine_, usesSbuf, usesPsum, end);

  // 5. Races, signals, semantics, DMA trigger.
  const VectorClock* vc = ctx_.races ? &ctx_.races->clock(agent_) : nullptr;
  if (ctx_.races && !dmaInst) ctx_.races->access(agent_, index);
  if (!dmaInst) {
    ctx_.signal(inst, index, isa::SignalAt::Read, start, vc);
    ctx_.signal(inst, index, isa::SignalAt::Complete, end + latencyNs, vc);
  }
  if (ctx_.memory) isa::execute(inst, index, *ctx_.memory);
  if (dmaInst) ctx_.dma->post(index, start, vc);

  // 6. Totals and trace.
  traces::EngineTotals& totals = ctx_.totals.engines[static_cast<size_t>(engine_)];
  totals.busyNs += end - start;
  ++totals.instructions;
  ++ctx_.totals.instructions;
  ctx_.totals.flops += cost.flops;
  ctx_.totals.transposeFlops += cost.transposeFlops;
  if (!dmaInst) {
    forEachOperand(inst, [&](const isa::AccessPattern& ap, bool write) {
      if (ap.space != isa::Space::Sbuf) return;
      (write ? ctx_.totals.sbufWriteBytes : ctx_.totals.sbufReadBytes) +=
          ap.numElements() * isa::dtypeBytes(ap.dtype);
    });
  }
  if (ctx_.sink) emit(inst, index, readyNs, start, end, stall, cycles, cost.flops);

  // 7. The engine is held until `end`; results land after the pipeline latency.
  if (!dmaInst && engine_ != isa::Engine::Tensor)
    pushInFlight({end + latencyNs, index, footprintOf(inst.dst)});
  ctx_.noteEnd(end + latencyNs);
  local_ = end;
}

void EngineModule::emit(const isa::Instruction& inst, int64_t index, double readyNs, double start,
                        double end, const Stall& stall, int64_t cycles, int64_t flops) {
  traces::InstructionEvent e;
  e.index = index;
  e.engine = engine_;
  e.opcode = inst.opcode;
  e.readyNs = readyNs;
  e.startNs = start;
  e.endNs = end;
  e.stall = stall.cause;
  e.waitSemaphore = stall.sem;
  e.waitValue = stall.value;
  e.waitedOnInstruction = stall.by;
  e.cycles = cycles;
  e.flops = flops;
  forEachOperand(inst, [&](const isa::AccessPattern& ap, bool write) {
    (write ? e.bytesWritten : e.bytesRead) += ap.numElements() * isa::dtypeBytes(ap.dtype);
  });
  ctx_.sink->instruction(e);
  if (engine_ == isa::Engine::Tensor && end > start)
    ctx_.sink->counter({traces::Counter::PeUtilization, start,
                        100.0 * static_cast<double>(flops) /
                            (2.0 * 128 * 128 * ctx_.machine.peGhz * (end - start))});
}

}  // namespace neuronsim::sim
