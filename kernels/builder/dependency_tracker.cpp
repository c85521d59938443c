// Interval maps of last writers and readers, and minimal semaphore waits from them.
#include "kernels/builder/dependency_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>

#include "isa/footprint.h"
#include "kernels/builder/views.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kMaxRuns = 4096;
constexpr size_t kMaxLayers = 8;

void maxInto(DependencyTracker::Knowledge& into, const DependencyTracker::Knowledge& from) {
  for (int i = 0; i < kNumStreams; ++i) into[i] = std::max(into[i], from[i]);
}

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 < b1 && b0 < a1;
}

/// Records `a` in `list`, keeping one entry per stream and kind with the higher count.
template <class List, class Access>
void noteAccess(List& list, Access a) {
  auto it = std::find_if(list.begin(), list.end(), [&](const Access& x) {
    return x.stream == a.stream && x.write == a.write;
  });
  if (it == list.end()) {
    list.push_back(a);
  } else {
    it->count = std::max(it->count, a.count);
  }
}

}  // namespace

std::vector<std::string> streamSemaphoreNames(int32_t queues) {
  std::vector<std::string> names;
  for (int e = 0; e < isa::kNumEngines; ++e)
    names.emplace_back(isa::engineName(static_cast<isa::Engine>(e)));
  for (int q = 0; q < queues; ++q) names.push_back(fmt::format("q{}", q));
  return names;
}

int streamOfEngine(isa::Engine engine) {
  return static_cast<int>(engine);
}
int streamOfQueue(int32_t queue) {
  return isa::kNumEngines + queue;
}

namespace {

/// Appends rows [row0, row1) x columns [col0, col1), merged into the last box when it has the
/// same columns and ends at row0.
void pushBox(std::vector<Box>& boxes, int64_t row0, int64_t row1, int64_t col0, int64_t col1) {
  if (!boxes.empty()) {
    Box& last = boxes.back();
    if (last.p0 == col0 && last.p1 == col1 && last.hi == row0) {
      last.hi = row1;
      return;
    }
  }
  boxes.push_back(Box{col0, col1, row0, row1, nullptr});
}

/// Cuts element runs [lo, hi) into rows of `rowLength` and merges vertically adjacent
/// rectangles with equal columns: keys are rows, layers are columns.
std::vector<Box> runsToBoxes(const std::vector<std::pair<int64_t, int64_t>>& runs,
                             int64_t rowLength) {
  std::vector<Box> boxes;
  auto push = [&](int64_t row0, int64_t row1, int64_t col0, int64_t col1) {
    pushBox(boxes, row0, row1, col0, col1);
  };
  for (auto [lo, hi] : runs) {
    if (rowLength <= 0) {
      boxes.push_back(Box{0, 1, lo, hi, nullptr});
      continue;
    }
    int64_t row = lo / rowLength;
    const int64_t lastRow = (hi - 1) / rowLength;
    if (row == lastRow) {
      push(row, row + 1, lo - row * rowLength, hi - row * rowLength);
      continue;
    }
    if (lo % rowLength != 0) {
      push(row, row + 1, lo - row * rowLength, rowLength);
      ++row;
    }
    const int64_t fullEnd = hi % rowLength == 0 ? lastRow + 1 : lastRow;
    if (fullEnd > row) push(row, fullEnd, 0, rowLength);
    if (fullEnd == lastRow) push(lastRow, lastRow + 1, 0, hi - lastRow * rowLength);
  }
  return boxes;
}

/// Calls fn(b) for b = base + sum of i_j * dims[j].step over j < upTo, 0 <= i_j < dims[j].num,
/// in lexicographic order of the i_j, while fn returns true.
template <class F>
void forEachBase(const std::vector<isa::Dim>& dims, int upTo, int64_t base, F&& fn) {
  std::vector<int64_t> index(upTo, 0);
  while (fn(base)) {
    int j = upTo - 1;
    for (; j >= 0 && ++index[j] == dims[j].num; --j) {
      base -= dims[j].step * (dims[j].num - 1);
      index[j] = 0;
    }
    if (j < 0) return;
    base += dims[j].step;
  }
}

}  // namespace

Region regionOf(const isa::AccessPattern& ap, int64_t rowLength) {
  Region region;
  region.space = ap.space;
  if (ap.space != isa::Space::Hbm) {
    const isa::Footprint f = isa::footprintOf(ap);
    region.boxes.push_back(Box{f.partBegin, f.partEnd, f.byteBegin, f.byteEnd, bytePatternOf(ap)});
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
  const auto [innerLo, innerHi] = isa::dimsSpan(std::span(dims).subspan(static_cast<size_t>(k)));
  // The outer dims enumerated with steps made positive and descending, so that the runs usually
  // come out sorted (mergeRuns then need not sort them).
  int64_t base = ap.offset;
  std::vector<isa::Dim> outer(dims.begin(), dims.begin() + k);
  for (isa::Dim& d : outer) {
    if (d.step >= 0) continue;
    base += d.step * (d.num - 1);
    d.step = -d.step;
  }
  std::sort(outer.begin(), outer.end(),
            [](const isa::Dim& x, const isa::Dim& y) { return x.step > y.step; });
  const int64_t width = innerHi + 1 - innerLo;
  if (rowLength > 0 && k > 0 && outer[k - 1].step == rowLength && width < rowLength) {
    // The innermost outer dim steps one row: its runs stack into one box per value of the other
    // dims. When every run sits inside a row and each stack starts past the previous one's end,
    // the runs are sorted and none touch, so these are the boxes the general path gives.
    const int64_t rows = outer[k - 1].num;
    std::vector<Box> boxes;
    int64_t lastEnd = INT64_MIN;
    bool exact = true;
    forEachBase(outer, k - 1, base, [&](int64_t b) {
      const int64_t lo = b + innerLo, hi = lo + width;
      const int64_t row = lo / rowLength;
      exact = lo >= 0 && lo > lastEnd && row == (hi - 1) / rowLength;
      if (exact) pushBox(boxes, row, row + rows, lo - row * rowLength, hi - row * rowLength);
      lastEnd = hi + (rows - 1) * rowLength;
      return exact;
    });
    if (exact) {
      region.boxes = std::move(boxes);
      return region;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> runs;
  runs.reserve(outerRuns(k));
  forEachBase(outer, k, base, [&](int64_t b) {
    runs.emplace_back(b + innerLo, b + innerHi + 1);
    return true;
  });
  mergeRuns(runs);
  region.boxes = runsToBoxes(runs, rowLength);
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

const BytePattern* DependencyTracker::intern(const std::shared_ptr<const BytePattern>& pattern) {
  return pattern ? &*patterns_.insert(*pattern).first : nullptr;
}

void DependencyTracker::gather(const Region& region, bool write,
                               std::array<int64_t, kNumStreams>& need) {
  SegmentMap& map = mapFor(region);
  auto raises = [&](const Access& a) { return a.stream >= 0 && a.count > need[a.stream]; };
  auto waitedOn = [&](const Access& a) { return a.write || write; };
  for (const Box& box : region.boxes) {
    auto it = map.upper_bound(box.lo);
    if (it != map.begin() && std::prev(it)->second.hi > box.lo) --it;
    for (; it != map.end() && it->first < box.hi; ++it) {
      const int64_t lo = std::max(it->first, box.lo);
      const int64_t hi = std::min(it->second.hi, box.hi);
      for (const Layer& layer : it->second.layers) {
        if (!overlaps(layer.p0, layer.p1, box.p0, box.p1)) continue;
        if (!raises(layer.writer) &&
            std::none_of(layer.others.begin(), layer.others.end(),
                         [&](const Access& a) { return waitedOn(a) && raises(a); }))
          continue;
        if ((layer.pattern || box.pattern) &&
            !patternsMeet(layer.pattern, box.pattern.get(), lo, hi))
          continue;
        if (raises(layer.writer)) need[layer.writer.stream] = layer.writer.count;
        for (const Access& a : layer.others)
          if (waitedOn(a) && raises(a)) need[a.stream] = a.count;
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

void DependencyTracker::capLayers(std::vector<Layer>& layers) {
  while (layers.size() > kMaxLayers) {
    Layer& into = layers[0];
    const Layer& from = layers[1];
    into.p0 = std::min(into.p0, from.p0);
    into.p1 = std::max(into.p1, from.p1);
    if (into.pattern != from.pattern) into.pattern = nullptr;
    if (into.writer.stream < 0) {
      into.writer = from.writer;
    } else if (from.writer.stream == into.writer.stream) {
      into.writer.count = std::max(into.writer.count, from.writer.count);
    } else if (from.writer.stream >= 0) {
      noteAccess(into.others, from.writer);
    }
    for (const Access& a : from.others) noteAccess(into.others, a);
    layers.erase(layers.begin() + 1);
  }
}

void DependencyTracker::recordRead(SegmentMap& map, const Box& box, const BytePattern* pattern,
                                   Access self) {
  Layer fresh;
  fresh.p0 = box.p0;
  fresh.p1 = box.p1;
  fresh.pattern = pattern;
  fresh.others.push_back(self);
  splitAt(map, box.lo);
  splitAt(map, box.hi);
  int64_t cursor = box.lo;
  for (auto it = map.lower_bound(box.lo); it != map.end() && it->first < box.hi; ++it) {
    if (it->first > cursor) map.emplace_hint(it, cursor, Segment{it->first, {fresh}});
    auto& layers = it->second.layers;
    bool covered = false;
    Layer* ownReads = nullptr;  // a layer of reads by this stream only, on the same partitions
    for (Layer& layer : layers) {
      if (!overlaps(layer.p0, layer.p1, box.p0, box.p1)) continue;
      if (layer.writer.stream < 0 && layer.p0 == box.p0 && layer.p1 == box.p1 &&
          layer.others.size() == 1 && layer.others[0].stream == self.stream)
        ownReads = &layer;
      // A strided read is noted only on layers of its own pattern: elsewhere it gets its own
      // layer, so that writes between its bytes do not wait for it.
      const bool same = layer.pattern == pattern;
      if (pattern && !same) continue;
      covered = covered || (layer.p0 <= box.p0 && layer.p1 >= box.p1 && (!layer.pattern || same));
      noteAccess(layer.others, self);
    }
    if (covered || (pattern && !patternsMeet(pattern, nullptr, it->first, it->second.hi))) {
      // nothing to add
    } else if (ownReads != nullptr) {
      // One stream's reads of several patterns share a layer (their union, taken as dense):
      // only writes between them wait longer, and layers stay few.
      ownReads->pattern = nullptr;
      noteAccess(ownReads->others, self);
    } else {
      layers.push_back(fresh);
      capLayers(layers);
    }
    cursor = it->second.hi;
  }
  if (cursor < box.hi) map.emplace(cursor, Segment{box.hi, {fresh}});
}

void DependencyTracker::recordWrite(SegmentMap& map, const Box& box, const BytePattern* pattern,
                                    Access self) {
  Layer written;
  written.p0 = box.p0;
  written.p1 = box.p1;
  written.pattern = pattern;
  written.writer = self;
  splitAt(map, box.lo);
  splitAt(map, box.hi);
  int64_t cursor = box.lo;
  for (auto it = map.lower_bound(box.lo); it != map.end() && it->first < box.hi; ++it) {
    if (it->first > cursor) map.emplace_hint(it, cursor, Segment{it->first, {written}});
    cursor = it->second.hi;
    if (pattern && !patternsMeet(pattern, nullptr, it->first, it->second.hi)) continue;
    auto& layers = it->second.layers;
    layers.erase(std::remove_if(layers.begin(), layers.end(),
                                [&](const Layer& l) {
                                  return l.p0 >= box.p0 && l.p1 <= box.p1 &&
                                         (!pattern || l.pattern == pattern);
                                }),
                 layers.end());
    layers.push_back(written);
    capLayers(layers);
  }
  if (cursor < box.hi) map.emplace(cursor, Segment{box.hi, {written}});
  // Coalesce neighbours inside the box that now hold the same single layer.
  auto it = map.lower_bound(box.lo);
  while (it != map.end() && it->first < box.hi) {
    auto next = std::next(it);
    if (next == map.end() || next->first >= box.hi || next->first != it->second.hi) {
      it = next;
      continue;
    }
    const auto& a = it->second.layers;
    const auto& b = next->second.layers;
    if (a.size() == 1 && b.size() == 1 && a[0].others.empty() && b[0].others.empty() &&
        a[0].p0 == b[0].p0 && a[0].p1 == b[0].p1 && a[0].pattern == b[0].pattern &&
        a[0].writer.stream == b[0].writer.stream && a[0].writer.count == b[0].writer.count) {
      it->second.hi = next->second.hi;
      map.erase(next);
    } else {
      it = next;
    }
  }
}

void DependencyTracker::add(isa::Instruction& inst, const std::vector<Region>& reads,
                            const std::vector<Region>& writes) {
  const bool dma = isa::isDma(inst.opcode);
  const int own = dma ? streamOfQueue(inst.dmaQueue) : streamOfEngine(inst.engine);
  const int issuer = streamOfEngine(inst.engine);

  std::array<int64_t, kNumStreams> need{};
  for (const Region& r : reads) gather(r, false, need);
  for (const Region& r : writes) gather(r, true, need);
  if (!dma) need[own] = 0;

  Knowledge known = engineState_[issuer];
  std::array<int, kNumStreams> candidates;
  size_t numCandidates = 0;
  for (int t = 0; t < kNumStreams; ++t)
    if (need[t] > known[t]) candidates[numCandidates++] = t;
  std::array<bool, kNumStreams> dropped{};
  for (size_t i = 0; i < numCandidates; ++i) {
    Knowledge others = known;
    for (size_t j = 0; j < numCandidates; ++j)
      if (j != i && !dropped[j])
        maxInto(others, completed_[candidates[j]][need[candidates[j]] - 1]);
    if (others[candidates[i]] >= need[candidates[i]]) dropped[i] = true;
  }
  inst.waits.clear();
  for (size_t i = 0; i < numCandidates; ++i) {
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
  for (const Region& r : reads)
    for (const Box& box : r.boxes)
      recordRead(mapFor(r), box, intern(box.pattern), Access{static_cast<int16_t>(own), false, c});
  for (const Region& r : writes)
    for (const Box& box : r.boxes)
      recordWrite(mapFor(r), box, intern(box.pattern), Access{static_cast<int16_t>(own), true, c});
}

}  // namespace neuronsim::kernels
