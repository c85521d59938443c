// Fluid progress of DMA parts with per-engine round robin and the HBM cap.
#include "sim/dma/dma_fluid.h"

#include <algorithm>

namespace neuronsim::sim {

DmaFluid::DmaFluid(const MachineConfig& machine)
    : engines_(machine.dmaEngines),
      queues_(machine.dmaQueues),
      hbmBytesPerNs_(machine.hbmGBps),
      fifos_(static_cast<size_t>(machine.dmaEngines) * machine.dmaQueues) {}

void DmaFluid::add(int32_t queue, double readyNs, const DmaPlan& plan, int64_t tag) {
  int32_t slot;
  if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
  } else {
    slot = static_cast<int32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& t = transfers_[slot];
  t = Transfer{readyNs, static_cast<int32_t>(plan.parts.size()), false, tag};
  const int32_t q = std::clamp(queue, 0, queues_ - 1);
  for (const DmaPart& part : plan.parts) {
    const double work = std::max(part.workNs, kEps);
    fifos_[static_cast<size_t>(part.engine) * queues_ + q].push_back(
        Flow{slot, work, static_cast<double>(part.bytes) / work,
             static_cast<double>(part.hbmBytes) / work});
  }
  ++inFlight_;
}

double DmaFluid::nextEventNs() const {
  double next = kNever;
  for (const std::deque<Flow>& fifo : fifos_) {
    if (fifo.empty()) continue;
    const Flow& head = fifo.front();
    if (!ready(head))
      next = std::min(next, transfers_[head.transfer].readyNs);
    else if (head.rate > 0)
      next = std::min(next, now_ + head.remaining / head.rate);
  }
  return next;
}

void DmaFluid::advanceTo(double ns, DmaListener& listener) {
  const double dt = ns - now_;
  if (dt > 0) {
    bool moving = false;
    for (std::deque<Flow>& fifo : fifos_) {
      if (fifo.empty() || fifo.front().rate <= 0) continue;
      fifo.front().remaining -= fifo.front().rate * dt;
      moving = true;
    }
    if (moving) activeNs_ += dt;
    now_ = ns;
  }
  for (std::deque<Flow>& fifo : fifos_) {
    while (!fifo.empty() && ready(fifo.front()) && fifo.front().rate > 0 &&
           fifo.front().remaining <= kEps) {
      Transfer& t = transfers_[fifo.front().transfer];
      fifo.pop_front();
      if (--t.partsLeft == 0) {
        --inFlight_;
        freeSlots_.push_back(static_cast<int32_t>(&t - transfers_.data()));
        listener.transferFinished(t.tag, now_);
      }
    }
  }
  recomputeRates(listener);
}

void DmaFluid::recomputeRates(DmaListener& listener) {
  double hbmDemand = 0;
  for (int32_t e = 0; e < engines_; ++e) {
    int32_t readyCount = 0;
    for (int32_t q = 0; q < queues_; ++q) {
      const std::deque<Flow>& fifo = fifos_[static_cast<size_t>(e) * queues_ + q];
      if (!fifo.empty() && ready(fifo.front())) ++readyCount;
    }
    for (int32_t q = 0; q < queues_; ++q) {
      std::deque<Flow>& fifo = fifos_[static_cast<size_t>(e) * queues_ + q];
      if (fifo.empty()) continue;
      Flow& head = fifo.front();
      if (!ready(head)) {
        head.rate = 0;
        continue;
      }
      head.rate = 1.0 / readyCount;
      hbmDemand += head.rate * head.hbmPerWork;
      Transfer& t = transfers_[head.transfer];
      if (!t.started) {
        t.started = true;
        listener.transferStarted(t.tag, now_);
      }
    }
  }
  if (hbmDemand > hbmBytesPerNs_) {
    const double scale = hbmBytesPerNs_ / hbmDemand;
    for (std::deque<Flow>& fifo : fifos_)
      if (!fifo.empty() && fifo.front().rate > 0 && fifo.front().hbmPerWork > 0)
        fifo.front().rate *= scale;
  }
}

double DmaFluid::bytesPerNs() const {
  double total = 0;
  for (const std::deque<Flow>& fifo : fifos_)
    if (!fifo.empty()) total += fifo.front().rate * fifo.front().bytesPerWork;
  return total;
}

}  // namespace neuronsim::sim
