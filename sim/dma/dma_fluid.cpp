// Fluid progress of DMA parts in integer time: per-engine round robin, per-queue admission,
// the HBM cap.
#include "sim/dma/dma_fluid.h"

#include <algorithm>
#include <cmath>

namespace neuronsim::sim {
namespace {
using Wide = __int128;
}  // namespace

DmaFluid::DmaFluid(const MachineConfig& machine)
    : engines_(machine.geometry.dmaEngines),
      queues_(machine.geometry.dmaQueues),
      queueInflight_(machine.dmaQueueInflight),
      latencyPs_(std::llround(machine.dmaLatencyNs * 1000.0)),
      hbmBytesPerNs_(machine.hbmGBps),
      fifos_(static_cast<size_t>(machine.geometry.dmaEngines) * machine.geometry.dmaQueues),
      busy_((fifos_.size() + 63) / 64, 0),
      waiting_(static_cast<size_t>(machine.geometry.dmaQueues)),
      admitted_(static_cast<size_t>(machine.geometry.dmaQueues), 0),
      readyHeads_(static_cast<size_t>(machine.geometry.dmaEngines), 0) {}

void DmaFluid::add(int32_t queue, Picos triggerPs, DmaPlan plan, int64_t tag) {
  int32_t slot;
  if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
  } else {
    slot = static_cast<int32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  nextKnown_ = settled_ = false;
  const int32_t q = std::clamp(queue, 0, queues_ - 1);
  const auto parts = static_cast<int32_t>(plan.parts.size());
  transfers_[slot] = Transfer{kNever, q, parts, parts, false, tag, std::move(plan)};
  ++inFlight_;
  if (admitted_[q] < queueInflight_ && waiting_[q].empty())
    admit(slot, std::max(triggerPs, now_));
  else
    waiting_[q].push_back(slot);
}

void DmaFluid::admit(int32_t slot, Picos at) {
  Transfer& t = transfers_[slot];
  t.readyPs = at + latencyPs_;
  ++admitted_[t.queue];
  for (const DmaPart& part : t.plan.parts) {
    const size_t fifo = static_cast<size_t>(part.engine) * queues_ + t.queue;
    fifos_[fifo].push_back(Flow{slot, part.dataFs + part.overheadFs, part.overheadFs, part.bytes,
                                part.hbmLoadBytes, part.dataFs});
    markBusy(fifo, true);
  }
  t.plan = DmaPlan{};
}

void DmaFluid::admitWaiting(int32_t queue) {
  std::deque<int32_t>& waiting = waiting_[queue];
  while (!waiting.empty() && admitted_[queue] < queueInflight_) {
    admit(waiting.front(), now_);
    waiting.pop_front();
  }
}

Picos DmaFluid::psFor(const Flow& flow, EngineFs work) const {
  const EngineFs positive = std::max<EngineFs>(work, 0);
  // Below 2^32 fs the rounded-up quotient's numerator fits 63 bits (speed < 2^41).
  if (positive < (EngineFs{1} << 32))
    return ((positive << kShareBits) + flow.speed - 1) / flow.speed;
  const Wide scaled = static_cast<Wide>(positive) << kShareBits;
  return static_cast<Picos>((scaled + flow.speed - 1) / flow.speed);
}

void DmaFluid::markBusy(size_t fifo, bool busy) {
  const uint64_t bit = uint64_t{1} << (fifo % 64);
  busy_[fifo / 64] = busy ? busy_[fifo / 64] | bit : busy_[fifo / 64] & ~bit;
}

Picos DmaFluid::nextEventPs() const {
  if (!nextKnown_) {
    nextEvent_ = scanNextEvent();
    nextKnown_ = true;
  }
  return nextEvent_;
}

Picos DmaFluid::scanNextEvent() const {
  Picos next = kNever;
  forEachBusy([&](int32_t f) {
    const Flow& head = fifos_[static_cast<size_t>(f)].front();
    if (!ready(head)) {
      next = std::min(next, transfers_[head.transfer].readyPs);
    } else if (head.speed > 0) {
      const EngineFs work = head.landed ? head.remaining : head.remaining - head.overhead;
      next = std::min(next, now_ + psFor(head, work));
    }
  });
  return next;
}

void DmaFluid::land(Flow& flow, DmaListener& listener) {
  flow.landed = true;
  Transfer& t = transfers_[flow.transfer];
  if (--t.partsLeft > 0) return;
  --inFlight_;
  --admitted_[t.queue];
  listener.transferFinished(t.tag, now_);
  admitWaiting(t.queue);
}

void DmaFluid::advanceTo(Picos ps, DmaListener& listener) {
  for (Picos next = nextEventPs(); next > now_ && next < ps; next = nextEventPs())
    step(next, listener);
  // A step at now_ with nothing added since the last one would change nothing.
  if (ps > now_ || !settled_) step(std::max(ps, now_), listener);
}

void DmaFluid::step(Picos ps, DmaListener& listener) {
  nextKnown_ = false;
  if (ps > now_) {
    const Wide dt = ps - now_;
    bool moving = false;
    forEachBusy([&](int32_t f) {
      Flow& head = fifos_[static_cast<size_t>(f)].front();
      if (head.speed == 0) return;
      const EngineFs done = static_cast<EngineFs>((dt * head.speed) >> kShareBits);
      head.remaining -= std::min(done, head.remaining);
      moving = moving || !head.landed;
    });
    if (moving) activePs_ += ps - now_;
    now_ = ps;
  }
  forEachBusy([&](int32_t f) {
    std::deque<Flow>& fifo = fifos_[static_cast<size_t>(f)];
    while (!fifo.empty() && ready(fifo.front())) {
      Flow& head = fifo.front();
      if (!head.landed && head.remaining <= head.overhead) land(head, listener);
      if (!head.landed || head.remaining > 0) break;
      const int32_t slot = head.transfer;
      fifo.pop_front();
      if (--transfers_[slot].flowsLeft == 0) freeSlots_.push_back(slot);
    }
    if (fifo.empty()) markBusy(static_cast<size_t>(f), false);
  });
  recomputeSpeeds(listener);
  settled_ = true;
}

void DmaFluid::recomputeSpeeds(DmaListener& listener) {
  constexpr int64_t kFullSpeed = kFsPerPs << kShareBits;
  std::fill(readyHeads_.begin(), readyHeads_.end(), 0);
  forEachBusy([&](int32_t f) {
    if (ready(fifos_[static_cast<size_t>(f)].front()))
      ++readyHeads_[static_cast<size_t>(f / queues_)];
  });
  double hbmDemand = 0;
  forEachBusy([&](int32_t f) {
    Flow& head = fifos_[static_cast<size_t>(f)].front();
    const int64_t readyHeads = readyHeads_[static_cast<size_t>(f / queues_)];
    head.speed = ready(head) ? kFullSpeed / readyHeads : 0;
    if (head.speed == 0) return;
    if (!head.landed && head.dataFs > 0)
      hbmDemand += static_cast<double>(head.hbmLoadBytes) * 1e6 / static_cast<double>(head.dataFs) /
                   static_cast<double>(readyHeads);
    Transfer& t = transfers_[head.transfer];
    if (!t.started && !head.landed) {
      t.started = true;
      listener.transferStarted(t.tag, now_);
    }
  });
  if (hbmDemand <= hbmBytesPerNs_) return;
  const double scale = hbmBytesPerNs_ / hbmDemand;
  forEachBusy([&](int32_t f) {
    Flow& head = fifos_[static_cast<size_t>(f)].front();
    if (head.speed == 0 || head.landed || head.hbmLoadBytes == 0) return;
    head.speed =
        std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(head.speed) * scale));
  });
}

double DmaFluid::bytesPerNs() const {
  double total = 0;
  forEachBusy([&](int32_t f) {
    const Flow& head = fifos_[static_cast<size_t>(f)].front();
    if (head.speed == 0 || head.landed || head.dataFs == 0) return;
    const double fsPerPs = static_cast<double>(head.speed) / static_cast<double>(1LL << kShareBits);
    total += static_cast<double>(head.bytes) / static_cast<double>(head.dataFs) * fsPerPs * 1000.0;
  });
  return total;
}

}  // namespace neuronsim::sim
