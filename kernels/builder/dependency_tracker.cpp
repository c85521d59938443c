// Interval maps of last writers and readers, and minimal semaphore waits from them.
#include "kernels/builder/dependency_tracker.h"

#include <algorithm>

#include "isa/dtype.h"
#include "kernels/builder/views.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kMaxRuns = 4096;

void maxInto(DependencyTracker::Knowledge& into, const DependencyTracker::Knowledge& from) {
  for (int i = 0; i < kNumStreams; ++i) into[i] = std::max(into[i], from[i]);
}

bool overlaps(int32_t a0, int32_t a1, int32_t b0, int32_t b1) { return a0 < b1 && b0 < a1; }

}  // namespace

std::vector<std::string> streamSemaphoreNames() {
  std::vector<std::string> names;
  for (int e = 0; e < isa::kNumEngines; ++e) names.emplace_back(isa::engineName(static_cast<isa::Engine>(e)));
  for (int q = 0; q < kNumQueues; ++q) {
    std::string name = "q";
    name += std::to_string(q);
    names.push_back(std::move(name));
  }
  return names;
}

int streamOfEngine(isa::Engine engine) { return static_cast<int>(engine); }
int streamOfQueue(int32_t queue) { return isa::kNumEngines + queue; }

Region regionOf(const isa::AccessPattern& ap) {
  Region region;
  region.space = ap.space;
  if (ap.space != isa::Space::Hbm) {
    const int64_t bytes = isa::dtypeBytes(ap.dtype);
    int64_t lo = 0, hi = 0;
    for (const isa::Dim& d : ap.dims) {
      const int64_t span = d.step * (d.num - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
    }
    region.p0 = ap.partitionStart;
    region.p1 = ap.partitionStart + ap.partitionCount;
    region.intervals.emplace_back(ap.offset + lo * bytes, ap.offset + (hi + 1) * bytes);
    return region;
  }
  region.tensor = ap.tensor;
  std::vector<isa::Dim> all{isa::Dim{ap.partitionStep, ap.partitionCount}};
  all.insert(all.end(), ap.dims.begin(), ap.dims.end());
  const std::vector<isa::Dim> dims = compactDims(all);
  const int n = static_cast<int>(dims.size());
  int k = (n > 0 && dims.back().step == 1) ? n - 1 : n;
  auto outerRuns = [&](int upTo) {
    int64_t runs = 1;
    for (int j = 0; j < upTo; ++j) runs *= dims[j].num;
    return runs;
  };
  while (k > 0 && outerRuns(k) > kMaxRuns) --k;
  int64_t innerLo = 0, innerHi = 0;
  for (int j = k; j < n; ++j) {
    const int64_t span = dims[j].step * (dims[j].num - 1);
    innerLo += std::min<int64_t>(0, span);
    innerHi += std::max<int64_t>(0, span);
  }
  std::vector<int64_t> index(k, 0);
  auto& out = region.intervals;
  out.reserve(outerRuns(k));
  while (true) {
    int64_t base = ap.offset;
    for (int j = 0; j < k; ++j) base += index[j] * dims[j].step;
    out.emplace_back(base + innerLo, base + innerHi + 1);
    int j = k - 1;
    while (j >= 0 && ++index[j] == dims[j].num) index[j--] = 0;
    if (j < 0) break;
  }
  std::sort(out.begin(), out.end());
  size_t w = 0;
  for (size_t r = 1; r < out.size(); ++r) {
    if (out[r].first <= out[w].second) {
      out[w].second = std::max(out[w].second, out[r].second);
    } else {
      out[++w] = out[r];
    }
  }
  out.resize(out.empty() ? 0 : w + 1);
  return region;
}

DependencyTracker::DependencyTracker() {
  for (auto& k : engineState_) k.fill(0);
}

DependencyTracker::SegmentMap& DependencyTracker::mapFor(const Region& region) {
  switch (region.space) {
    case isa::Space::Sbuf:
      return sbuf_;
    case isa::Space::Psum:
      return psum_;
    case isa::Space::Hbm:
      break;
  }
  if (region.tensor >= static_cast<int32_t>(hbm_.size())) hbm_.resize(region.tensor + 1);
  return hbm_[region.tensor];
}

void DependencyTracker::gather(const Region& region, bool write, std::array<int64_t, kNumStreams>& need) {
  SegmentMap& map = mapFor(region);
  for (const auto& [lo, hi] : region.intervals) {
    auto it = map.upper_bound(lo);
    if (it != map.begin() && std::prev(it)->second.hi > lo) --it;
    for (; it != map.end() && it->first < hi; ++it) {
      for (const Layer& layer : it->second.layers) {
        if (!overlaps(layer.p0, layer.p1, region.p0, region.p1)) continue;
        if (layer.writer.stream >= 0) need[layer.writer.stream] = std::max(need[layer.writer.stream], layer.writer.count);
        if (!write) continue;
        for (const Access& r : layer.readers) need[r.stream] = std::max(need[r.stream], r.count);
      }
    }
  }
}

void DependencyTracker::splitAt(SegmentMap& map, int64_t at) {
  auto it = map.upper_bound(at);
  if (it == map.begin()) return;
  --it;
  if (it->first >= at || it->second.hi <= at) return;
  Segment tail = it->second;
  it->second.hi = at;
  map.emplace_hint(std::next(it), at, std::move(tail));
}

void DependencyTracker::recordRead(const Region& region, Access self) {
  SegmentMap& map = mapFor(region);
  auto readLayer = [&] {
    Layer layer;
    layer.p0 = region.p0;
    layer.p1 = region.p1;
    layer.readers.push_back(self);
    return layer;
  };
  for (const auto& [lo, hi] : region.intervals) {
    splitAt(map, lo);
    splitAt(map, hi);
    int64_t cursor = lo;
    for (auto it = map.lower_bound(lo); it != map.end() && it->first < hi; ++it) {
      if (it->first > cursor) map.emplace_hint(it, cursor, Segment{it->first, {readLayer()}});
      bool covered = false;
      for (Layer& layer : it->second.layers) {
        if (!overlaps(layer.p0, layer.p1, region.p0, region.p1)) continue;
        covered = covered || (layer.p0 <= region.p0 && layer.p1 >= region.p1);
        auto r = std::find_if(layer.readers.begin(), layer.readers.end(),
                              [&](const Access& a) { return a.stream == self.stream; });
        if (r == layer.readers.end()) {
          layer.readers.push_back(self);
        } else {
          r->count = self.count;
        }
      }
      if (!covered) it->second.layers.push_back(readLayer());
      cursor = it->second.hi;
    }
    if (cursor < hi) map.emplace(cursor, Segment{hi, {readLayer()}});
  }
}

void DependencyTracker::recordWrite(const Region& region, Access self) {
  SegmentMap& map = mapFor(region);
  Layer written;
  written.p0 = region.p0;
  written.p1 = region.p1;
  written.writer = self;
  for (const auto& [lo, hi] : region.intervals) {
    splitAt(map, lo);
    splitAt(map, hi);
    int64_t cursor = lo;
    for (auto it = map.lower_bound(lo); it != map.end() && it->first < hi; ++it) {
      if (it->first > cursor) map.emplace_hint(it, cursor, Segment{it->first, {written}});
      auto& layers = it->second.layers;
      layers.erase(std::remove_if(layers.begin(), layers.end(),
                                  [&](const Layer& l) { return l.p0 >= region.p0 && l.p1 <= region.p1; }),
                   layers.end());
      layers.push_back(written);
      cursor = it->second.hi;
    }
    if (cursor < hi) map.emplace(cursor, Segment{hi, {written}});
    // Coalesce the now identical neighbours inside [lo, hi).
    auto it = map.lower_bound(lo);
    while (it != map.end() && it->first < hi) {
      auto next = std::next(it);
      if (next == map.end() || next->first >= hi || next->first != it->second.hi) {
        it = next;
        continue;
      }
      const auto& a = it->second.layers;
      const auto& b = next->second.layers;
      if (a.size() == 1 && b.size() == 1 && a[0].readers.empty() && b[0].readers.empty() && a[0].p0 == b[0].p0 &&
          a[0].p1 == b[0].p1 && a[0].writer.stream == b[0].writer.stream && a[0].writer.count == b[0].writer.count) {
        it->second.hi = next->second.hi;
        map.erase(next);
      } else {
        it = next;
      }
    }
  }
}

void DependencyTracker::add(isa::Instruction& inst, const std::vector<Region>& reads, const std::vector<Region>& writes) {
  const bool dma = isa::isDma(inst.opcode);
  const int own = dma ? streamOfQueue(inst.dmaQueue) : streamOfEngine(inst.engine);
  const int issuer = streamOfEngine(inst.engine);

  std::array<int64_t, kNumStreams> need{};
  for (const Region& r : reads) gather(r, false, need);
  for (const Region& r : writes) gather(r, true, need);
  if (!dma) need[own] = 0;

  Knowledge known = engineState_[issuer];
  std::vector<int> candidates;
  for (int t = 0; t < kNumStreams; ++t)
    if (need[t] > known[t]) candidates.push_back(t);
  std::vector<bool> dropped(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    Knowledge others = known;
    for (size_t j = 0; j < candidates.size(); ++j)
      if (j != i && !dropped[j]) maxInto(others, completed_[candidates[j]][need[candidates[j]] - 1]);
    if (others[candidates[i]] >= need[candidates[i]]) dropped[i] = true;
  }
  inst.waits.clear();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (dropped[i]) continue;
    const int t = candidates[i];
    inst.waits.push_back(isa::SemWait{t, need[t]});
    maxInto(known, completed_[t][need[t] - 1]);
  }

  const int64_t c = ++count_[own];
  Knowledge done = known;
  if (dma && c >= 2) maxInto(done, completed_[own][c - 2]);
  done[own] = c;
  completed_[own].push_back(done);
  engineState_[issuer] = dma ? known : done;

  inst.signals.assign(1, isa::SemSignal{own, isa::SignalAt::Complete, 1});
  const Access self{static_cast<int16_t>(own), c};
  for (const Region& r : reads) recordRead(r, self);
  for (const Region& r : writes) recordWrite(r, self);
}

}  // namespace neuronsim::kernels
