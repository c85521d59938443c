// DMA efficiency tables from the transfers and trigger instructions of a trace.
#include "traces/dma_efficiency.h"

#include <algorithm>
#include <map>

#include "traces/track_layout.h"

namespace neuronsim::traces {

double transferPeakGbps(const Span& transfer, const MachineFacts& machine) {
  const double perEngine = machine.number("dma_engine_bytes_per_ns", 0);
  const int32_t engines = transfer.dmaEngines > 0
                              ? transfer.dmaEngines
                              : static_cast<int32_t>(machine.number("dma_engines", 0));
  double peak = perEngine * engines;
  const double hbm = machine.number("hbm_gbps", 0);
  if (transfer.hbmBytes > 0 && hbm > 0) peak = std::min(peak, hbm);
  return peak;
}

namespace {

/// Transfers under this share of their peak are listed as the slowest.
constexpr double kSlowPercent = 75;

double percentOfPeak(const Span& s, const MachineFacts& machine) {
  const double peak = transferPeakGbps(s, machine);
  const double dur = s.endNs - s.startNs;
  if (peak <= 0 || dur <= 0) return 0;
  return 100.0 * static_cast<double>(s.bytes) / dur / peak;
}

double unionNs(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, from = 0, to = -1;
  for (const auto& [s, e] : intervals) {
    if (s > to) {
      if (to > from) total += to - from;
      from = s;
      to = e;
    } else {
      to = std::max(to, e);
    }
  }
  if (to > from) total += to - from;
  return total;
}

}  // namespace

DmaEfficiency dmaEfficiency(const TraceModel& model) {
  DmaEfficiency out;
  out.engineBytesPerNs = model.machine.number("dma_engine_bytes_per_ns", 0);
  out.hbmBytesPerNs = model.machine.number("hbm_gbps", 0);
  out.peakKnown = out.engineBytesPerNs > 0;
  for (auto [low, high] :
       std::vector<std::pair<double, double>>{{0, 10}, {10, 25}, {25, 50}, {50, 75}, {75, 0}})
    out.efficiency.push_back({low, high});
  for (auto [low, high] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 512}, {512, 2048}, {2048, 8192}, {8192, 32768}, {32768, 0}})
    out.sizes.push_back({low, high});

  std::map<std::string, QueueUse> queues;
  std::map<std::string, std::vector<std::pair<double, double>>> intervals;
  std::map<std::string, TriggerOverhead> triggers;
  double weighted = 0;
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < model.spans.size(); ++i) {
    const Span& s = model.spans[i];
    if (!s.isDma) {
      TriggerOverhead& t = triggers[s.track];
      t.engine = s.track;
      t.engineBusyNs += s.endNs - s.startNs;
      if (s.opcode.rfind("dma_", 0) == 0) ++t.triggers, t.ns += s.endNs - s.startNs;
      continue;
    }
    const double dur = s.endNs - s.startNs;
    ++out.transfers;
    out.bytes += s.bytes;
    for (SizeBucket& b : out.sizes)
      if (s.bytesPerPartition >= b.lowBytes &&
          (b.highBytes == 0 || s.bytesPerPartition < b.highBytes)) {
        ++b.transfers, b.bytes += s.bytes, b.ns += dur;
        break;
      }
    QueueUse& q = queues[s.track];
    q.queue = s.track;
    ++q.transfers;
    q.bytes += s.bytes;
    q.latencyNs += std::max(0.0, s.startNs - s.readyNs);
    intervals[s.track].emplace_back(s.startNs, s.endNs);
    if (!out.peakKnown) continue;
    const double percent = percentOfPeak(s, model.machine);
    weighted += percent * static_cast<double>(s.bytes);
    ranked.emplace_back(percent, i);
    for (EfficiencyBucket& b : out.efficiency)
      if (percent >= b.lowPercent && (b.highPercent == 0 || percent < b.highPercent)) {
        ++b.transfers, b.bytes += s.bytes, b.ns += dur;
        break;
      }
  }
  out.weightedPercent = out.bytes > 0 ? weighted / static_cast<double>(out.bytes) : 0;
  for (auto& [name, q] : queues) {
    q.activeNs = unionNs(intervals[name]);
    out.queues.push_back(q);
  }
  std::stable_sort(out.queues.begin(), out.queues.end(), [](const QueueUse& a, const QueueUse& b) {
    return trackRank(a.queue) < trackRank(b.queue);
  });
  for (auto& [name, t] : triggers)
    if (t.triggers > 0) out.triggers.push_back(t);
  std::stable_sort(out.triggers.begin(), out.triggers.end(),
                   [](const TriggerOverhead& a, const TriggerOverhead& b) {
                     return trackRank(a.engine) < trackRank(b.engine);
                   });
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : model.spans[a.second].bytes > model.spans[b.second].bytes;
  });
  for (size_t k = 0; k < ranked.size() && k < 5 && ranked[k].first < kSlowPercent; ++k)
    out.slowest.push_back(ranked[k].second);
  return out;
}

}  // namespace neuronsim::traces
