#pragma once
// A fluid model of the 16 DMA engines: FIFO per (engine, queue), engine time shared equally
// by the queues with ready work (round robin, D1), HBM-side bytes of all engines capped by
// the core's HBM bandwidth. Rates are recomputed whenever the set of moving parts changes.

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "sim/dma/dma_plan.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Receives transfer milestones from DmaFluid::advanceTo.
class DmaListener {
 public:
  virtual ~DmaListener() = default;
  /// The first part of transfer `tag` began moving data at `ns`.
  virtual void transferStarted(int64_t tag, double ns) = 0;
  /// The last part of transfer `tag` finished at `ns`.
  virtual void transferFinished(int64_t tag, double ns) = 0;
};

/// The bandwidth-sharing state of all DMA engines; plain C++, driven by DmaModule.
class DmaFluid {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit DmaFluid(const MachineConfig& machine);

  /// Queues transfer `tag` on `queue`; its parts may move data from `readyNs` on.
  void add(int32_t queue, double readyNs, const DmaPlan& plan, int64_t tag);
  /// The next moment a part finishes or a queued part becomes ready (kNever when idle).
  double nextEventNs() const;
  /// Moves the model to `ns` (no later than nextEventNs()), reporting milestones.
  void advanceTo(double ns, DmaListener& listener);
  /// Aggregate data rate now (bytes per ns).
  double bytesPerNs() const;
  /// Total time at least one part was moving data.
  double activeNs() const { return activeNs_; }
  /// Transfers queued or moving.
  int32_t inFlight() const { return inFlight_; }
  double nowNs() const { return now_; }

 private:
  /// A queued or moving transfer.
  struct Transfer {
    double readyNs = 0;
    int32_t partsLeft = 0;
    bool started = false;
    int64_t tag = -1;
  };
  /// One transfer's part on one (engine, queue) FIFO.
  struct Flow {
    int32_t transfer;
    double remaining;     ///< engine-ns of work left
    double bytesPerWork;  ///< destination bytes per engine-ns of work
    double hbmPerWork;    ///< HBM bytes per engine-ns of work
    double rate = 0;      ///< engine-ns of work done per ns
  };

  void recomputeRates(DmaListener& listener);
  bool ready(const Flow& flow) const { return transfers_[flow.transfer].readyNs <= now_ + kEps; }

  static constexpr double kEps = 1e-6;
  int32_t engines_, queues_;
  double hbmBytesPerNs_;
  std::vector<std::deque<Flow>> fifos_;  ///< index engine * queues + queue
  std::vector<Transfer> transfers_;
  std::vector<int32_t> freeSlots_;
  double now_ = 0;
  double activeNs_ = 0;
  int32_t inFlight_ = 0;
};

}  // namespace neuronsim::sim
