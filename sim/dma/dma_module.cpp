// DMA shell: transfer bookkeeping, signals, events and counters around the fluid model.
// The fluid model counts in ns (double); this shell is where its times become ticks.
#include "sim/dma/dma_module.h"

#include <algorithm>
#include <cmath>

#include "isa/error.h"
#include "sim/core/systemc_time.h"
#include "sim/core/text.h"
#include "sim/core/time_limit.h"

namespace neuronsim::sim {
namespace {

/// The first tick at or after `ns` (a finite time of the fluid model).
Tick tickAtOrAfter(double ns) {
  const double ps = std::ceil(ns * 1000.0);
  return ps < 4.6e18 ? Tick::fromPs(static_cast<int64_t>(ps)) : Tick::fromPs(int64_t{1} << 62);
}

}  // namespace

DmaModule::DmaModule(sc_core::sc_module_name name, CoreContext& context)
    : sc_core::sc_module(name), ctx_(context), fluid_(context.machine()) {
  SC_THREAD(run);
}

void DmaModule::post(int64_t index, Tick issue, const VectorClock* issuerClock) {
  const isa::Instruction& inst = ctx_.program().instructions[static_cast<size_t>(index)];
  const DmaPlan plan = planDma(inst, ctx_.machine());
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
    races->access(agent, index, OperandList(inst));
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

  fluid_.advanceTo(std::max(fluid_.nowNs(), scNow().ns()), *this);
  const int64_t tag = static_cast<int64_t>(transfers_.size());
  transfers_.push_back(t);
  if (static_cast<size_t>(t.queue) >= unsignalled_.size()) unsignalled_.resize(t.queue + 1);
  unsignalled_[static_cast<size_t>(t.queue)].push_back(tag);
  fluid_.add(t.queue, issue.ns() + ctx_.machine().dmaLatencyNs, plan, tag);
  fluid_.advanceTo(fluid_.nowNs(), *this);
  sampleCounters();
  wake_.notify();
}

void DmaModule::run() {
  try {
    while (true) {
      const double next = fluid_.nextEventNs();
      if (next == DmaFluid::kNever) {
        sc_core::wait(wake_);
      } else {
        const Tick at = tickAtOrAfter(next);
        if (at > kSimulatedTimeLimit) throwTimeLimit(at, "the DMA transfers in flight");
        sc_core::wait(delayUntil(at), wake_);
      }
      fluid_.advanceTo(std::max(fluid_.nowNs(), scNow().ns()), *this);
      sampleCounters();
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (...) {
    ctx_.fail(std::current_exception());
  }
}

void DmaModule::transferStarted(int64_t tag, double /*ns*/) {
  // The fluid model reports at its now, which is the SystemC now (to the ps).
  Transfer& t = transfers_[static_cast<size_t>(tag)];
  t.start = scNow();
  // @read releases the clock from before this transfer: none of it has landed yet.
  VectorClock before = t.clock;
  --before[static_cast<size_t>(queueAgent(t.queue))];
  ctx_.signal(ctx_.program().instructions[static_cast<size_t>(t.index)], t.index,
              isa::SignalAt::Read, t.start, ctx_.races() ? &before : nullptr);
}

void DmaModule::transferFinished(int64_t tag, double /*ns*/) {
  transfers_[static_cast<size_t>(tag)].landed = true;
  signalLandedInOrder(transfers_[static_cast<size_t>(tag)].queue);
}

void DmaModule::signalLandedInOrder(int32_t queue) {
  std::deque<int64_t>& pending = unsignalled_[static_cast<size_t>(queue)];
  const Tick now = scNow();
  while (!pending.empty() && transfers_[static_cast<size_t>(pending.front())].landed) {
    const Transfer& t = transfers_[static_cast<size_t>(pending.front())];
    pending.pop_front();
    ctx_.signal(ctx_.program().instructions[static_cast<size_t>(t.index)], t.index,
                isa::SignalAt::Complete, now, ctx_.races() ? &t.clock : nullptr);
    ctx_.recorder().totals().dmaActive = Tick::fromNs(fluid_.activeNs());
    ctx_.recorder().noteEnd(now);
    if (traces::EventSink* sink = ctx_.recorder().sink()) {
      traces::DmaEvent e;
      e.index = t.index;
      e.queue = t.queue;
      e.issue = t.issue;
      e.start = t.start;
      e.end = now;
      e.bytes = t.bytes;
      e.descriptors = t.descriptors;
      e.dmaEngines = t.engines;
      e.hbmBytes = t.hbmBytes;
      sink->dma(e);
    }
  }
}

void DmaModule::sampleCounters() {
  ctx_.recorder().totals().dmaActive = Tick::fromNs(fluid_.activeNs());
  traces::EventSink* sink = ctx_.recorder().sink();
  if (!sink) return;
  const double gbps = fluid_.bytesPerNs();
  const Tick now = scNow();
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
