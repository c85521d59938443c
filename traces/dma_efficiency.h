#pragma once
// How well the DMAs of a run used the hardware: achieved against peak bandwidth, transfer sizes,
// trigger overhead on the issuing engines, queue occupancy.

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_model.h"

namespace neuronsim::traces {

/// Transfers whose bytes per partition fall in [lowBytes, highBytes) (highBytes 0: no bound).
struct SizeBucket {
  int64_t lowBytes = 0;
  int64_t highBytes = 0;
  int64_t transfers = 0;
  int64_t bytes = 0;
  double ns = 0;  ///< summed transfer time (first byte to completion)
};

/// Transfers whose achieved rate is in [lowPercent, highPercent) of their peak.
struct EfficiencyBucket {
  double lowPercent = 0;
  double highPercent = 0;
  int64_t transfers = 0;
  int64_t bytes = 0;
  double ns = 0;
};

/// DMA triggers issued by one engine.
struct TriggerOverhead {
  std::string engine;
  int64_t triggers = 0;
  double ns = 0;            ///< engine time spent triggering
  double engineBusyNs = 0;  ///< all of the engine's busy time
};

/// One DMA queue.
struct QueueUse {
  std::string queue;
  int64_t transfers = 0;
  int64_t bytes = 0;
  double activeNs = 0;   ///< union of its transfers' [start, end]
  double latencyNs = 0;  ///< summed issue-to-first-byte
  double gbps() const { return activeNs > 0 ? static_cast<double>(bytes) / activeNs : 0; }
};

struct DmaEfficiency {
  bool peakKnown = false;  ///< the trace recorded the machine (per-engine DMA rate, HBM rate)
  double engineBytesPerNs = 0;
  double hbmBytesPerNs = 0;
  int64_t transfers = 0;
  int64_t bytes = 0;
  double weightedPercent = 0;                ///< bytes-weighted achieved / peak, in percent
  std::vector<EfficiencyBucket> efficiency;  ///< 0-10, 10-25, 25-50, 50-75, 75-100+ %
  std::vector<SizeBucket> sizes;             ///< bytes per partition: <512, <2K, <8K, <32K, >=32K
  std::vector<TriggerOverhead> triggers;     ///< engines that triggered DMAs
  std::vector<QueueUse> queues;              ///< queue order
  /// Up to 5 transfers (model.spans) under 75% of their peak, lowest first (most bytes on ties).
  std::vector<size_t> slowest;
};

/// A transfer's peak rate (B/ns = GB/s): its DMA engines at the per-engine rate, capped by HBM
/// when it touches HBM; 0 when the machine is unknown.
double transferPeakGbps(const Span& transfer, const MachineFacts& machine);

DmaEfficiency dmaEfficiency(const TraceModel& model);

}  // namespace neuronsim::traces
