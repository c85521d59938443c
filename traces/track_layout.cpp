// Track assignment with overflow lanes for overlapping events.
#include "traces/track_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "traces/tick.h"

namespace neuronsim::traces {

namespace {

/// Assigns each event (start, end) on base track `tids[i]` the first lane free at its start.
void assignLanes(std::vector<int>& tids, const std::vector<double>& starts,
                 const std::vector<double>& ends) {
  std::vector<size_t> order(tids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tids[a] != tids[b] ? tids[a] < tids[b] : starts[a] < starts[b];
  });
  std::map<int, std::vector<Tick>> laneEnds;
  for (size_t i : order) {
    auto& lanes = laneEnds[tids[i]];
    const Tick start = Tick::fromNs(starts[i]);
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] > start) ++lane;
    if (lane == lanes.size()) lanes.push_back(Tick());
    lanes[lane] = std::max(Tick::fromNs(ends[i]), start);
    tids[i] += static_cast<int>(lane) * kLaneTidStride;
  }
}

}  // namespace

int engineTid(isa::Engine engine) {
  return 1 + static_cast<int>(engine);
}

int queueTid(int32_t queue) {
  return kDmaTidBase + queue;
}

std::string trackName(int tid) {
  if (tid == kKernelTid) return "kernel";
  int lane = tid / kLaneTidStride;
  int base = tid % kLaneTidStride;
  std::string name = base >= kDmaTidBase
                         ? fmt::format("dma.q{}", base - kDmaTidBase)
                         : std::string(isa::engineName(static_cast<isa::Engine>(base - 1)));
  if (lane > 0) name += fmt::format(" #{}", lane + 1);
  return name;
}

int trackRank(const std::string& track) {
  for (int e = 0; e < isa::kNumEngines; ++e)
    if (track == isa::engineName(static_cast<isa::Engine>(e))) return e;
  if (track.rfind("dma.q", 0) == 0) return 100 + std::atoi(track.c_str() + 5);
  return 1000;
}

TrackLayout layoutTracks(const EventLog& log) {
  TrackLayout layout;
  std::vector<double> starts, ends;
  for (const auto& e : log.instructions) {
    layout.instructionTids.push_back(engineTid(e.engine));
    starts.push_back(e.start.ns());
    ends.push_back(e.end.ns());
  }
  assignLanes(layout.instructionTids, starts, ends);
  starts.clear();
  ends.clear();
  for (const auto& d : log.dmas) {
    layout.dmaTids.push_back(queueTid(d.queue));
    starts.push_back(d.start.ns());
    ends.push_back(d.end.ns());
  }
  assignLanes(layout.dmaTids, starts, ends);
  std::set<int> used(layout.instructionTids.begin(), layout.instructionTids.end());
  used.insert(layout.dmaTids.begin(), layout.dmaTids.end());
  layout.usedTids.assign(used.begin(), used.end());
  return layout;
}

}  // namespace neuronsim::traces
