// Live intervals of tiles from event times, swept into SBUF/PSUM occupancy counter samples.
#include "kernels/harness/occupancy.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace neuronsim::kernels {

namespace {

/// Earliest start and latest end of each instruction index over its instruction and DMA events.
struct IndexTimes {
  std::vector<double> start, end;
  void cover(int64_t index, double s, double e) {
    if (index < 0) return;
    if (static_cast<size_t>(index) >= start.size()) {
      start.resize(index + 1, std::numeric_limits<double>::infinity());
      end.resize(index + 1, -std::numeric_limits<double>::infinity());
    }
    start[index] = std::min(start[index], s);
    end[index] = std::max(end[index], e);
  }
  bool has(int64_t index) const {
    return index >= 0 && static_cast<size_t>(index) < start.size() && start[index] <= end[index];
  }
};

/// Sweeps (time, +/-bytes) steps into samples of `counter`, one per change, from 0 at 0 ns.
void sweep(std::vector<std::pair<double, int64_t>> steps, traces::Counter counter,
           std::vector<traces::CounterSample>& out) {
  std::sort(steps.begin(), steps.end());
  out.push_back({counter, traces::Tick(), 0.0});
  int64_t level = 0;
  for (size_t i = 0; i < steps.size();) {
    const double ns = steps[i].first;
    for (; i < steps.size() && steps[i].first == ns; ++i) level += steps[i].second;
    const double value = static_cast<double>(level);
    if (value == out.back().value) continue;
    if (ns <= out.back().at.ns()) {
      out.back().value = value;  // a change at the very start replaces the opening zero
    } else {
      out.push_back({counter, traces::Tick::fromNs(ns), value});
    }
  }
}

}  // namespace

std::vector<LiveInterval> liveIntervals(const std::vector<AllocationRecord>& allocations,
                                        const traces::EventLog& log) {
  IndexTimes times;
  for (const traces::InstructionEvent& e : log.instructions)
    times.cover(e.index, e.start.ns(), e.end.ns());
  for (const traces::DmaEvent& e : log.dmas) times.cover(e.index, e.start.ns(), e.end.ns());
  std::vector<LiveInterval> intervals;
  for (const AllocationRecord& record : allocations) {
    LiveInterval live{record.space, record.bytes, std::numeric_limits<double>::infinity(),
                      -std::numeric_limits<double>::infinity()};
    for (int64_t index : record.instructions) {
      if (!times.has(index)) continue;
      live.startNs = std::min(live.startNs, times.start[index]);
      live.endNs = std::max(live.endNs, times.end[index]);
    }
    if (live.startNs <= live.endNs) intervals.push_back(live);
  }
  return intervals;
}

std::vector<traces::CounterSample> occupancySamples(const std::vector<LiveInterval>& intervals) {
  std::vector<std::pair<double, int64_t>> sbuf, psum;
  for (const LiveInterval& live : intervals) {
    auto& steps = live.space == isa::Space::Psum ? psum : sbuf;
    steps.emplace_back(live.startNs, live.bytes);
    steps.emplace_back(live.endNs, -live.bytes);
  }
  std::vector<traces::CounterSample> samples;
  sweep(std::move(sbuf), traces::Counter::SbufBytes, samples);
  sweep(std::move(psum), traces::Counter::PsumBytes, samples);
  return samples;
}

void appendOccupancyCounters(traces::EventLog& log,
                             const std::vector<AllocationRecord>& allocations) {
  const std::vector<traces::CounterSample> samples =
      occupancySamples(liveIntervals(allocations, log));
  log.counters.insert(log.counters.end(), samples.begin(), samples.end());
}

}  // namespace neuronsim::kernels
