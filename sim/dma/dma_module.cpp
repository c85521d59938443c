// DMA shell: transfer bookkeeping, signals, events and counters around the fluid model.
#include "sim/dma/dma_module.h"

#include <algorithm>
#include <cmath>

#include "sim/dma/dma_trigger.h"

namespace neuronsim::sim {
namespace {
Picos kernelNowPs() {
  return static_cast<Picos>(sc_core::sc_time_stamp().value());
}
double toNs(Picos ps) {
  return static_cast<double>(ps) / 1000.0;
}
}  // namespace

DmaModule::DmaModule(sc_core::sc_module_name name, CoreContext& context)
    : sc_core::sc_module(name), ctx_(context), fluid_(context.machine) {
  SC_THREAD(run);
}

void DmaModule::post(int64_t index, double issueNs, const VectorClock* issuerClock) {
  const isa::Instruction& inst = ctx_.program.instructions[index];
  const DmaPlan plan = planDma(inst, ctx_.machine);
  Transfer t;
  t.index = index;
  t.queue = std::max(0, inst.dmaQueue);
  t.issueNs = issueNs;
  t.bytes = plan.bytes;
  t.hbmBytes = plan.hbmBytes;
  t.descriptors = static_cast<int32_t>(plan.descriptors);
  t.engines = static_cast<int32_t>(plan.parts.size());
  if (ctx_.races && issuerClock) {
    const int agent = queueAgent(t.queue);
    joinInto(ctx_.races->clock(agent), *issuerClock);
    ctx_.races->tick(agent);
    ctx_.races->access(agent, index);
    t.clock = ctx_.races->clock(agent);
  }
  const isa::AccessPattern& src = inst.srcs.at(0);
  if (src.space == isa::Space::Sbuf)
    ctx_.totals.sbufReadBytes += src.numElements() * isa::dtypeBytes(src.dtype);
  if (inst.dst.space == isa::Space::Sbuf) ctx_.totals.sbufWriteBytes += plan.bytes;
  ctx_.totals.dmaBytes += plan.bytes;
  ++ctx_.totals.dmaTransfers;
  ctx_.totals.hbmBytes += plan.hbmBytes;

  fluid_.advanceTo(kernelNowPs(), *this);
  const int64_t tag = static_cast<int64_t>(transfers_.size());
  transfers_.push_back(t);
  if (static_cast<size_t>(t.queue) >= unsignalled_.size()) unsignalled_.resize(t.queue + 1);
  unsignalled_[t.queue].push_back(tag);
  fluid_.add(t.queue, std::llround(issueNs * 1000.0), plan, tag);
  fluid_.advanceTo(fluid_.nowPs(), *this);
  sampleCounters();
  wake_.notify();
}

double DmaModule::triggerNs(int64_t index) const {
  const isa::Instruction& inst = ctx_.program.instructions[index];
  return toNs(dmaTriggerPs(inst.engine, planDma(inst, ctx_.machine), ctx_.machine));
}

void DmaModule::run() {
  try {
    while (true) {
      const Picos next = fluid_.nextEventPs();
      const Picos now = kernelNowPs();
      if (next == DmaFluid::kNever)
        sc_core::wait(wake_);
      else
        sc_core::wait(
            sc_core::sc_time::from_value(static_cast<uint64_t>(std::max(next, now) - now)), wake_);
      fluid_.advanceTo(kernelNowPs(), *this);
      sampleCounters();
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (...) {
    ctx_.fail(std::current_exception());
  }
}

void DmaModule::transferStarted(int64_t tag, Picos ps) {
  const double ns = toNs(ps);
  Transfer& t = transfers_[tag];
  t.startNs = ns;
  ctx_.signal(ctx_.program.instructions[t.index], t.index, isa::SignalAt::Read, ns, &t.clock);
}

void DmaModule::transferFinished(int64_t tag, Picos ps) {
  transfers_[tag].landed = true;
  signalLandedInOrder(transfers_[tag].queue, toNs(ps));
}

void DmaModule::signalLandedInOrder(int32_t queue, double ns) {
  std::deque<int64_t>& pending = unsignalled_[queue];
  while (!pending.empty() && transfers_[pending.front()].landed) {
    const Transfer& t = transfers_[pending.front()];
    pending.pop_front();
    ctx_.signal(ctx_.program.instructions[t.index], t.index, isa::SignalAt::Complete, ns, &t.clock);
    ctx_.totals.dmaActiveNs = toNs(fluid_.activePs());
    ctx_.noteEnd(ns);
    if (ctx_.sink) {
      traces::DmaEvent e;
      e.index = t.index;
      e.queue = t.queue;
      e.issueNs = t.issueNs;
      e.startNs = t.startNs;
      e.endNs = ns;
      e.bytes = t.bytes;
      e.descriptors = t.descriptors;
      e.dmaEngines = t.engines;
      e.hbmBytes = t.hbmBytes;
      ctx_.sink->dma(e);
    }
  }
}

void DmaModule::sampleCounters() {
  ctx_.totals.dmaActiveNs = toNs(fluid_.activePs());
  if (!ctx_.sink) return;
  const double gbps = fluid_.bytesPerNs();
  if (gbps != lastGbps_) {
    ctx_.sink->counter({traces::Counter::DmaGbps, toNs(fluid_.nowPs()), gbps});
    lastGbps_ = gbps;
  }
  if (fluid_.inFlight() != lastPending_) {
    ctx_.sink->counter({traces::Counter::PendingDmas, toNs(fluid_.nowPs()),
                        static_cast<double>(fluid_.inFlight())});
    lastPending_ = fluid_.inFlight();
  }
}

}  // namespace neuronsim::sim
