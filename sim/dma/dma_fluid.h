#pragma once
// A fluid model of a core's DMA engines in integer time: a FIFO per (engine, queue), each
// engine's time shared equally by the queues whose head part is ready (round robin, D1), at
// most dma_queue_inflight transfers of a queue admitted at once, and the HBM-side bytes of all
// engines capped by the core's HBM bandwidth (a part with strided HBM rows loads it by
// hbmLoadBytes). Rates change only when a part starts, finishes its data or its overhead, or a
// transfer becomes ready.

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "sim/dma/dma_plan.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Picoseconds of simulated time (the SystemC kernel's resolution).
using Picos = int64_t;

/// Receives transfer milestones from DmaFluid::advanceTo.
class DmaListener {
 public:
  virtual ~DmaListener() = default;
  /// The first part of transfer `tag` began moving data at `ps`.
  virtual void transferStarted(int64_t tag, Picos ps) = 0;
  /// The last part of transfer `tag` finished moving data at `ps` (its data has landed).
  virtual void transferFinished(int64_t tag, Picos ps) = 0;
};

/// The bandwidth-sharing state of all DMA engines; plain C++, driven by DmaModule.
/// Contract: add() is called with a trigger time no earlier than nowPs() after advancing to it.
class DmaFluid {
 public:
  static constexpr Picos kNever = std::numeric_limits<Picos>::max();

  explicit DmaFluid(const MachineConfig& machine);

  /// Posts transfer `tag` with `plan` (kept until admission) on `queue`, triggered at
  /// `triggerPs` (>= now). It is admitted when its queue has fewer than dma_queue_inflight
  /// transfers in flight and moves data from admission + dma_latency_ns on.
  void add(int32_t queue, Picos triggerPs, DmaPlan plan, int64_t tag);
  /// The next moment a part's phase ends or an admitted transfer becomes ready (kNever: idle);
  /// kept until the state changes.
  Picos nextEventPs() const;
  /// Moves the model to `ps` (earlier times are ignored), processing every event up to it in
  /// order and reporting the milestones.
  void advanceTo(Picos ps, DmaListener& listener);
  /// Aggregate data rate now (bytes per ns), for counters.
  double bytesPerNs() const;
  /// Total time at least one part was moving data.
  Picos activePs() const { return activePs_; }
  /// Transfers posted and not yet landed.
  int32_t inFlight() const { return inFlight_; }
  Picos nowPs() const { return now_; }

 private:
  /// A posted transfer.
  struct Transfer {
    Picos readyPs = kNever;  ///< data may move from here (set on admission)
    int32_t queue = 0;
    int32_t partsLeft = 0;  ///< parts whose data has not landed
    int32_t flowsLeft = 0;  ///< parts still on a FIFO (data or overhead left)
    bool started = false;
    int64_t tag = -1;
    DmaPlan plan;  ///< kept until admission
  };
  /// One transfer's part on one (engine, queue) FIFO: its data, then its overhead.
  struct Flow {
    int32_t transfer;
    EngineFs remaining;    ///< engine time left, data and overhead
    EngineFs overhead;     ///< the trailing part of `remaining` that moves no data
    int64_t bytes;         ///< data bytes (for the rate counter)
    int64_t hbmLoadBytes;  ///< its share of the HBM cap (DmaPart::hbmLoadBytes)
    EngineFs dataFs;
    bool landed = false;  ///< its data phase is over
    /// Engine fs done per 2^kShareBits ps of wall time while at the head (0: not moving).
    int64_t speed = 0;
  };

  static constexpr int kShareBits = 30;
  bool ready(const Flow& flow) const { return transfers_[flow.transfer].readyPs <= now_; }
  void admit(int32_t slot, Picos at);
  void admitWaiting(int32_t queue);
  void land(Flow& flow, DmaListener& listener);
  /// Advances to `ps` (no event strictly between now and it), then lands, pops and re-rates.
  void step(Picos ps, DmaListener& listener);
  void recomputeSpeeds(DmaListener& listener);
  /// nextEventPs() recomputed from every FIFO head.
  Picos scanNextEvent() const;
  /// Wall ps for `flow` to do `work` fs at its current speed (rounded up).
  Picos psFor(const Flow& flow, EngineFs work) const;
  /// Calls fn(fifo) for every non-empty FIFO, in index order, including one that fills ahead
  /// of the loop while it runs (the bitmap is re-read after every call).
  template <typename Fn>
  void forEachBusy(Fn&& fn) const;
  void markBusy(size_t fifo, bool busy);

  int32_t engines_, queues_, queueInflight_;
  Picos latencyPs_;
  double hbmBytesPerNs_;
  std::vector<std::deque<Flow>> fifos_;  ///< index engine * queues + queue
  std::vector<uint64_t> busy_;           ///< bit per FIFO: not empty
  std::vector<Transfer> transfers_;
  std::vector<int32_t> freeSlots_;
  std::vector<std::deque<int32_t>> waiting_;  ///< per queue: posted, not admitted (FIFO)
  std::vector<int32_t> admitted_;             ///< per queue: admitted, not landed
  std::vector<int64_t> readyHeads_;           ///< per engine: ready FIFO heads (recomputeSpeeds)
  Picos now_ = 0;
  Picos activePs_ = 0;
  int32_t inFlight_ = 0;
  mutable Picos nextEvent_ = kNever;  ///< nextEventPs() when nextKnown_
  mutable bool nextKnown_ = false;
  bool settled_ = false;  ///< step() ran at now_ and nothing was added since
};

template <typename Fn>
void DmaFluid::forEachBusy(Fn&& fn) const {
  const auto end = static_cast<int32_t>(fifos_.size());
  for (int32_t f = 0; f < end;) {
    const size_t word = static_cast<size_t>(f) / 64;
    const uint64_t bits = busy_[word] & (~uint64_t{0} << (f % 64));
    if (bits == 0) {
      f = static_cast<int32_t>(word + 1) * 64;
      continue;
    }
    f = static_cast<int32_t>(word * 64) + __builtin_ctzll(bits);
    if (f >= end) return;
    fn(f);
    ++f;
  }
}

}  // namespace neuronsim::sim
