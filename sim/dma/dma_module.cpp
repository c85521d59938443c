// DMA shell: transfer bookkeeping, signals, events and counters around the fluid model.
#include "sim/dma/dma_module.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/systemc_time.h"
#include "sim/core/time_limit.h"
#include "sim/dma/dma_trigger.h"

// The fluid model counts in Picos (int64 ps); this shell is where they become Ticks.
namespace neuronsim::sim {

DmaModule::DmaModule(sc_core::sc_module_name name, CoreContext& context)
    : sc_core::sc_module(name), ctx_(context), fluid_(context.machine()) {
  SC_THREAD(run);
}

void DmaModule::post(int64_t index, Tick issue, const VectorClock* issuerClock,
                     std::span<const Operand> operands) {
  const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
  const DmaPlan& plan = planOf(index);
  Transfer t;
  t.index = index;
  t.queue = std::max(0, inst.dmaQueue);
  t.issue = issue;
  t.bytes = plan.bytes;
  t.hbmBytes = plan.hbmBytes;
  t.descriptors = static_cast<int32_t>(plan.descriptors);
  t.engines = static_cast<int32_t>(plan.parts.size());
  if (RaceDetector* races = ctx_.races(); races && issuerClock) {
    const int agent = queueAgent(t.queue);
    joinInto(races->clock(agent), *issuerClock);
    races->tick(agent);
    races->access(agent, index, operands);
    t.clock = races->clock(agent);
  }
  traces::RunTotals& totals = ctx_.recorder().totals();
  const isa::AccessPattern& src = inst.srcs.at(0);
  if (src.space == isa::Space::Sbuf)
    totals.sbufReadBytes += src.numElements() * isa::dtypeBytes(src.dtype);
  if (inst.dst.space == isa::Space::Sbuf) totals.sbufWriteBytes += plan.bytes;
  totals.dmaBytes += plan.bytes;
  ++totals.dmaTransfers;
  totals.hbmBytes += plan.hbmBytes;

  fluid_.advanceTo(scNow().ps(), *this);
  const int64_t tag = static_cast<int64_t>(transfers_.size());
  transfers_.push_back(t);
  if (static_cast<size_t>(t.queue) >= unsignalled_.size()) unsignalled_.resize(t.queue + 1);
  unsignalled_[static_cast<size_t>(t.queue)].push_back(tag);
  fluid_.add(t.queue, issue.ps(), std::move(planned_), tag);  // plan is planned_
  plannedIndex_ = -1;
  fluid_.advanceTo(fluid_.nowPs(), *this);
  sampleCounters();
  wake_.notify();
}

Tick DmaModule::triggerTime(int64_t index) const {
  const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
  return Tick::fromPs(dmaTriggerPs(inst.engine, planOf(index), ctx_.machine()));
}

const DmaPlan& DmaModule::planOf(int64_t index) const {
  if (plannedIndex_ != index) {
    planned_ = planDma(ctx_.program().instructions[static_cast<size_t>(index)], ctx_.machine());
    plannedIndex_ = index;
  }
  return planned_;
}

void DmaModule::run() {
  try {
    while (true) {
      const Picos next = fluid_.nextEventPs();
      if (next == DmaFluid::kNever) {
        sc_core::wait(wake_);
      } else {
        const Tick at = Tick::fromPs(next);
        if (at > kSimulatedTimeLimit) throwTimeLimit(at, "the DMA transfers in flight");
        sc_core::wait(delayUntil(at), wake_);
      }
      fluid_.advanceTo(scNow().ps(), *this);
      sampleCounters();
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (...) {
    ctx_.fail(std::current_exception());
  }
}

void DmaModule::transferStarted(int64_t tag, Picos ps) {
  Transfer& t = transfers_[static_cast<size_t>(tag)];
  t.start = Tick::fromPs(ps);
  // @read releases the clock from before this transfer: none of it has landed yet.
  VectorClock before = t.clock;
  --before[static_cast<size_t>(queueAgent(t.queue))];
  ctx_.signal(ctx_.program().instructions[static_cast<size_t>(t.index)].signals, t.index,
              isa::SignalAt::Read, t.start, ctx_.races() ? &before : nullptr);
}

void DmaModule::transferFinished(int64_t tag, Picos ps) {
  transfers_[static_cast<size_t>(tag)].landed = true;
  signalLandedInOrder(transfers_[static_cast<size_t>(tag)].queue, Tick::fromPs(ps));
}

void DmaModule::signalLandedInOrder(int32_t queue, Tick at) {
  std::deque<int64_t>& pending = unsignalled_[static_cast<size_t>(queue)];
  while (!pending.empty() && transfers_[static_cast<size_t>(pending.front())].landed) {
    const Transfer& t = transfers_[static_cast<size_t>(pending.front())];
    pending.pop_front();
    ctx_.signal(ctx_.program().instructions[static_cast<size_t>(t.index)].signals, t.index,
                isa::SignalAt::Complete, at, ctx_.races() ? &t.clock : nullptr);
    ctx_.recorder().totals().dmaActive = Tick::fromPs(fluid_.activePs());
    ctx_.recorder().noteEnd(at);
    if (traces::EventSink* sink = ctx_.recorder().sink()) {
      traces::DmaEvent e;
      e.index = t.index;
      e.queue = t.queue;
      e.issue = t.issue;
      e.start = t.start;
      e.end = at;
      e.bytes = t.bytes;
      e.descriptors = t.descriptors;
      e.dmaEngines = t.engines;
      e.hbmBytes = t.hbmBytes;
      sink->dma(e);
    }
  }
}

void DmaModule::sampleCounters() {
  ctx_.recorder().totals().dmaActive = Tick::fromPs(fluid_.activePs());
  traces::EventSink* sink = ctx_.recorder().sink();
  if (!sink) return;
  const double gbps = fluid_.bytesPerNs();
  const Tick now = Tick::fromPs(fluid_.nowPs());
  if (gbps != lastGbps_) {
    sink->counter({traces::Counter::DmaGbps, now, gbps});
    lastGbps_ = gbps;
  }
  if (fluid_.inFlight() != lastPending_) {
    sink->counter({traces::Counter::PendingDmas, now, static_cast<double>(fluid_.inFlight())});
    lastPending_ = fluid_.inFlight();
  }
}

}  // namespace neuronsim::sim
