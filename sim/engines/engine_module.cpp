// The engine sequencer process: waits, interlocks, port conflicts, cost, semantics, signals.
#include "sim/engines/engine_module.h"

#include <algorithm>
#include <cmath>

#include "isa/semantics.h"
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
      throttle_(context.machine) {
  SC_THREAD(run);
  SC_METHOD(completer);
  sensitive << completionDue_;
  dont_initialize();
}

void EngineModule::run() {
  try {
    while (next_ < stream_.size()) {
      step(stream_[next_]);
      ++next_;
    }
    if (engine_ == isa::Engine::Tensor && ctx_.sink && lastPeStartNs_ >= 0)
      ctx_.sink->counter({traces::Counter::PeUtilization, lastPeEndNs_, 0});
  } catch (...) {
    ctx_.fail(std::current_exception());
  }
}

void EngineModule::completer() {
  try {
    retire(nowNs());
    for (size_t i = 0; i < ringSize_; ++i) {
      const InFlight& f = ring_[(ringHead_ + i) % kRing];
      if (f.hasSignals) {
        completionDue_.notify(delayUntilNs(f.completeNs));
        break;
      }
    }
  } catch (...) {
    ctx_.fail(std::current_exception());
  }
}

void EngineModule::retire(double ns) {
  while (ringSize_ > 0 && ring_[ringHead_].completeNs <= ns + 1e-6) {
    const InFlight& f = ring_[ringHead_];
    if (f.hasSignals)
      ctx_.signal(ctx_.program.instructions[f.index], f.index, isa::SignalAt::Complete, &f.clock);
    ringHead_ = (ringHead_ + 1) % kRing;
    --ringSize_;
  }
}

void EngineModule::pushInFlight(const InFlight& entry) {
  retire(nowNs());
  if (ringSize_ == kRing) {
    waitUntilNs(ring_[ringHead_].completeNs);
    retire(nowNs());
  }
  ring_[(ringHead_ + ringSize_) % kRing] = entry;
  ++ringSize_;
  if (entry.hasSignals) completionDue_.notify(delayUntilNs(entry.completeNs));
}

double EngineModule::interlockUntil(const isa::Instruction& inst, int64_t& by) const {
  double until = 0;
  const double now = nowNs();
  for (size_t i = 0; i < ringSize_; ++i) {
    const InFlight& f = ring_[(ringHead_ + i) % kRing];
    if (f.completeNs <= now) continue;
    bool hit = false;
    forEachOperand(inst, [&](const isa::AccessPattern& ap, bool write) {
      if (!write && !hit && boxesOverlap(footprintOf(ap), f.dst)) hit = true;
    });
    if (hit && f.completeNs > until) {
      until = f.completeNs;
      by = f.index;
    }
  }
  return until;
}

double EngineModule::tensorEnd(const isa::Instruction& inst, double start, bool stalled, int64_t issueCycles,
                               int64_t lsCycles, double& mmStart) {
  const isa::AccessPattern& stationary = inst.srcs.at(0);
  const bool changed = !lastStationary_ || !(*lastStationary_ == stationary);
  mmStart = start;
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
  const double readyNs = nowNs();
  Stall stall;

  // 1. Semaphore waits.
  for (const isa::SemWait& w : inst.waits) {
    Semaphore& sem = ctx_.semaphores[w.sem];
    if (sem.value >= w.value) continue;
    blockedOn_ = &w;
    do sc_core::wait(sem.changed);
    while (sem.value < w.value);
    blockedOn_ = nullptr;
    stall = {StallCause::Semaphore, w.sem, w.value, sem.lastSignaller};
  }
  if (ctx_.races) {
    for (const isa::SemWait& w : inst.waits) ctx_.races->acquire(agent_, w.sem, w.value);
    ctx_.races->tick(agent_);
  }

  const bool dmaInst = isa::isDma(inst.opcode);
  // 2. Same-engine read-after-write interlock on results still in the pipeline.
  if (!dmaInst && engine_ != isa::Engine::Tensor && ringSize_ > 0) {
    int64_t by = -1;
    const double until = interlockUntil(inst, by);
    if (until > nowNs()) {
      if (stall.cause == StallCause::None) stall = {StallCause::EngineBusy, -1, 0, by};
      waitUntilNs(until);
    }
  }

  // 3. NC-v2 SBUF/PSUM port conflicts.
  bool usesSbuf = false, usesPsum = false;
  if (ctx_.arbiter.enabled() && !dmaInst) {
    forEachOperand(inst, [&](const isa::AccessPattern& ap, bool) {
      usesSbuf = usesSbuf || ap.space == isa::Space::Sbuf;
      usesPsum = usesPsum || ap.space == isa::Space::Psum;
    });
    while (true) {
      const double freeAt = ctx_.arbiter.freeAt(engine_, usesSbuf, usesPsum);
      if (freeAt <= nowNs()) break;
      if (stall.cause == StallCause::None) stall = {StallCause::AccessConflict, -1, 0, -1};
      waitUntilNs(freeAt);
    }
  }

  // 4. Duration.
  const double start = nowNs();
  double end = start;
  double latencyNs = 0;
  int64_t cycles = 0;
  ComputeCost cost;
  if (dmaInst) {
    end = start + ctx_.machine.dmaTriggerNs;
    cycles = std::llround(ctx_.machine.dmaTriggerNs * clock_.ghz());
  } else {
    cost = computeCost(inst, ctx_.machine);
    cycles = cost.issue.value;
    latencyNs = clock_.toNs(cost.latency).value;
    if (engine_ == isa::Engine::Tensor) {
      double mmStart = start;
      end = tensorEnd(inst, start, stall.cause != StallCause::None, cost.issue.value, cost.loadStationary.value,
                      mmStart);
      if (mmStart > start && stall.cause == StallCause::None) stall.cause = StallCause::EngineBusy;
    } else {
      end = start + clock_.toNs(cost.issue).value;
    }
  }
  ctx_.arbiter.claim(engine_, usesSbuf, usesPsum, end);

  // 5. Races, read signals, semantics, DMA trigger.
  if (ctx_.races && !dmaInst) ctx_.races->access(agent_, index);
  if (!dmaInst) ctx_.signal(inst, index, isa::SignalAt::Read, ctx_.races ? &ctx_.races->clock(agent_) : nullptr);
  if (ctx_.memory) isa::execute(inst, index, *ctx_.memory);
  if (dmaInst) ctx_.dma->post(index, start, ctx_.races ? &ctx_.races->clock(agent_) : nullptr);

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
      (write ? ctx_.totals.sbufWriteBytes : ctx_.totals.sbufReadBytes) += ap.numElements() * isa::dtypeBytes(ap.dtype);
    });
  }
  if (ctx_.sink) emit(inst, index, readyNs, start, end, stall, cycles, cost.flops);

  // 7. Hold the engine; results land after the pipeline latency.
  if (!dmaInst) {
    InFlight f;
    f.completeNs = end + latencyNs;
    f.index = index;
    f.dst = footprintOf(inst.dst);
    f.hasSignals = false;
    for (const isa::SemSignal& s : inst.signals) f.hasSignals = f.hasSignals || s.at == isa::SignalAt::Complete;
    if (f.hasSignals && ctx_.races) f.clock = ctx_.races->clock(agent_);
    pushInFlight(f);
    ctx_.noteEnd(f.completeNs);
  }
  ctx_.noteEnd(end);
  waitUntilNs(end);
}

void EngineModule::emit(const isa::Instruction& inst, int64_t index, double readyNs, double start, double end,
                        const Stall& stall, int64_t cycles, int64_t flops) {
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
                        100.0 * static_cast<double>(flops) / (2.0 * 128 * 128 * ctx_.machine.peGhz * (end - start))});
}

}  // namespace neuronsim::sim
