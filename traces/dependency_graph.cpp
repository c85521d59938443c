// Dependency graph of a trace: edges, residuals, replay with a resource removed, critical path.
#include "traces/dependency_graph.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace neuronsim::traces {

namespace {

/// How far back an engine's in-flight results are looked for (the simulator's ring holds 64).
constexpr size_t kInterlockDepth = 64;
constexpr std::array<std::string_view, kNumResources> kResourceNames{
    "TensorE", "VectorE", "ScalarE", "GpSimd", "Sync", "DMA", "DMA triggers", "fixed latency"};

Resource engineResource(const std::string& track) {
  if (track == "tensor") return Resource::Tensor;
  if (track == "vector") return Resource::Vector;
  if (track == "scalar") return Resource::Scalar;
  if (track == "gpsimd") return Resource::GpSimd;
  return Resource::Sync;
}

}  // namespace

std::string_view resourceName(Resource resource) {
  const auto i = static_cast<size_t>(resource);
  return i < kResourceNames.size() ? kResourceNames[i] : std::string_view("?");
}

Resource spanResource(const Span& span) {
  if (span.isDma) return Resource::Dma;
  if (span.opcode.rfind("dma_", 0) == 0) return Resource::DmaTrigger;
  return engineResource(span.track);
}

DependencyGraph::DependencyGraph(const TraceModel& model) : nodes_(model.spans.size()) {
  std::unordered_map<int64_t, size_t> instructionOf, dmaOf;
  std::map<std::string, std::vector<size_t>> byTrack;
  for (size_t i = 0; i < model.spans.size(); ++i) {
    const Span& s = model.spans[i];
    nodes_[i].start = Tick::fromNs(s.startNs);
    nodes_[i].end = std::max(nodes_[i].start, Tick::fromNs(s.endNs));
    nodes_[i].resource = spanResource(s);
    (s.isDma ? dmaOf : instructionOf).emplace(s.index, i);
    byTrack[s.track].push_back(i);
    end_ = std::max(end_, nodes_[i].end);
  }
  auto producer = [&](int64_t index) -> int64_t {
    if (auto it = dmaOf.find(index); it != dmaOf.end()) return static_cast<int64_t>(it->second);
    if (auto it = instructionOf.find(index); it != instructionOf.end())
      return static_cast<int64_t>(it->second);
    return -1;
  };

  // 1. Stream order: engines by start; queues by posting (issue) order, when the previous had
  // ended.
  for (auto& [track, list] : byTrack) {
    const bool dma = model.spans[list.front()].isDma;
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      const Span &x = model.spans[a], &y = model.spans[b];
      const double kx = dma ? x.readyNs : x.startNs, ky = dma ? y.readyNs : y.startNs;
      return kx != ky ? kx < ky : x.index < y.index;
    });
    for (size_t k = 1; k < list.size(); ++k) {
      const size_t prev = list[k - 1], cur = list[k];
      if (dma && nodes_[prev].end > nodes_[cur].start) continue;
      addEdge(cur, prev, nodes_[prev].end, true);
    }
  }

  // 2. Semaphores, interlocks and DMA triggers.
  const double recordedLatency = model.machine.number("dma_latency_ns", -1);
  Tick dmaLatency = recordedLatency >= 0 ? Tick::fromNs(recordedLatency) : Tick::never();
  if (recordedLatency < 0)
    for (const Span& s : model.spans)
      if (s.isDma)
        dmaLatency = std::min(dmaLatency, Tick::fromNs(s.startNs) - Tick::fromNs(s.readyNs));
  for (size_t i = 0; i < model.spans.size(); ++i) {
    const Span& s = model.spans[i];
    if (s.isDma) {
      const Tick ready = Tick::fromNs(s.readyNs);
      if (auto it = instructionOf.find(s.index); it != instructionOf.end())
        addEdge(i, it->second, ready + std::clamp(nodes_[i].start - ready, Tick(), dmaLatency),
                false);
      continue;
    }
    bool bindingListed = false;
    for (const Release& r : s.waits)
      if (int64_t from = r.producer >= 0 ? producer(r.producer) : -1; from >= 0) {
        addEdge(i, static_cast<size_t>(from), Tick::fromNs(r.ns), false);
        bindingListed = bindingListed || r.producer == s.waitedOn;
      }
    if (s.stallCause == "semaphore" && s.waitedOn >= 0 && !bindingListed)
      if (int64_t from = producer(s.waitedOn); from >= 0)
        addEdge(i, static_cast<size_t>(from), nodes_[i].start, false);
    if (s.stallCause == "engine_busy" && s.waitedOn >= 0)
      if (auto it = instructionOf.find(s.waitedOn); it != instructionOf.end())
        addEdge(i, it->second, nodes_[i].start, false);
  }

  // 3. Interlocks the simulator did not name (it records one stall cause: a semaphore wait
  //    followed by an interlock shows only the wait): an engine instruction still waiting after its
  //    edges, whose start is exactly when an earlier instruction of its engine landed its results.
  for (auto& [track, list] : byTrack) {
    if (model.spans[list.front()].isDma) continue;
    const Resource engine = engineResource(track);
    if (engine == Resource::Tensor || engine == Resource::Sync) continue;
    const Tick latency = Tick::fromNs(model.machine.pipelineLatencyNs[static_cast<size_t>(engine)]);
    for (size_t k = 1; k < list.size(); ++k) {
      Node& n = nodes_[list[k]];
      if (n.resource != engine || n.start <= boundOf(n)) continue;
      for (size_t back = 1; back <= std::min<size_t>(k, kInterlockDepth); ++back) {
        const size_t from = list[k - back];
        if (nodes_[from].end + latency == n.start) {
          addEdge(list[k], from, n.start, false);
          break;
        }
      }
    }
  }

  // 4. Residuals and a topological order (Kahn).
  std::vector<std::vector<size_t>> out(nodes_.size());
  std::vector<size_t> pending(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    for (const Edge& e : n.in) out[e.from].push_back(i);
    n.residual = std::max(Tick(), n.start - boundOf(n));
    pending[i] = n.in.size();
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (pending[i] == 0) order_.push_back(i);
  for (size_t k = 0; k < order_.size(); ++k)
    for (size_t next : out[order_[k]])
      if (--pending[next] == 0) order_.push_back(next);
}

Tick DependencyGraph::anchorOf(const Edge& edge) const {
  return edge.fromEnd ? nodes_[edge.from].end : nodes_[edge.from].start;
}

Tick DependencyGraph::boundOf(const Node& node) const {
  Tick bound;
  for (const Edge& e : node.in) bound = std::max(bound, anchorOf(e) + e.lag);
  return bound;
}

void DependencyGraph::addEdge(size_t to, size_t from, Tick release, bool stream) {
  if (from == to) return;
  const Node& source = nodes_[from];
  release = std::min(release, nodes_[to].start);
  const bool fromEnd = release >= source.end;
  const Tick anchor = fromEnd ? source.end : source.start;
  if (anchor > nodes_[to].start) return;  // not a predecessor in time: a malformed record
  nodes_[to].in.push_back({from, fromEnd, std::max(Tick(), release - anchor), stream});
}

Tick DependencyGraph::replay(int skip) const {
  std::vector<Tick> start(nodes_.size()), end(nodes_.size());
  const bool noLatency = skip == static_cast<int>(Resource::FixedLatency);
  Tick last;
  for (size_t i : order_) {
    const Node& n = nodes_[i];
    Tick t;
    for (const Edge& e : n.in)
      t = std::max(t, (e.fromEnd ? end[e.from] : start[e.from]) + (noLatency ? Tick() : e.lag));
    const bool skipped = static_cast<int>(n.resource) == skip;
    start[i] = t + (skipped ? Tick() : n.residual);
    end[i] = start[i] + (skipped ? Tick() : n.end - n.start);
    last = std::max(last, end[i]);
  }
  return last;
}

std::array<double, kNumResources> DependencyGraph::residualNs() const {
  std::array<Tick, kNumResources> sums{};
  for (const Node& n : nodes_) sums[static_cast<size_t>(n.resource)] += n.residual;
  std::array<double, kNumResources> ns{};
  for (size_t r = 0; r < ns.size(); ++r) ns[r] = sums[r].ns();
  return ns;
}

double DependencyGraph::endWithout(Resource resource) const {
  return replay(static_cast<int>(resource)).ns();
}

double DependencyGraph::replayedEndNs() const {
  return replay(-1).ns();
}

std::vector<WhatIf> DependencyGraph::whatIfs() const {
  std::array<bool, kNumResources> present{};
  for (const Node& n : nodes_) {
    if (n.end > n.start || n.residual > Tick()) present[static_cast<size_t>(n.resource)] = true;
    for (const Edge& e : n.in)
      present[static_cast<size_t>(Resource::FixedLatency)] |= e.lag > Tick();
  }
  std::vector<WhatIf> out;
  if (!acyclic()) return out;
  for (int r = 0; r < kNumResources; ++r)
    if (present[static_cast<size_t>(r)])
      out.push_back({static_cast<Resource>(r), endWithout(static_cast<Resource>(r))});
  std::stable_sort(out.begin(), out.end(),
                   [](const WhatIf& a, const WhatIf& b) { return a.endNs < b.endNs; });
  return out;
}

CriticalPath DependencyGraph::criticalPath() const {
  CriticalPath path;
  if (nodes_.empty()) return path;
  size_t at = 0;
  for (size_t i = 1; i < nodes_.size(); ++i)
    if (nodes_[i].end > nodes_[at].end) at = i;
  Tick cursor = nodes_[at].end;
  path.totalNs = cursor.ns();
  struct Piece {
    size_t span;
    Resource resource;
    Tick from, to;
  };
  std::vector<Piece> reversed;
  auto take = [&](size_t span, Resource resource, Tick from) {
    from = std::max(Tick(), from);
    if (from < cursor) {
      reversed.push_back({span, resource, from, cursor});
      cursor = from;
    }
  };
  std::vector<bool> visited(nodes_.size(), false);
  bool viaEnd = true;
  while (true) {
    visited[at] = true;
    const Node& n = nodes_[at];
    if (viaEnd) take(at, n.resource, n.start);
    const Edge* best = nullptr;
    Tick bestAt;
    for (const Edge& e : n.in) {
      const Tick t = anchorOf(e) + e.lag;
      if (!best || t > bestAt || (t == bestAt && best->stream && !e.stream)) {
        best = &e;
        bestAt = t;
      }
    }
    if (!best || visited[best->from]) {
      take(at, n.resource, Tick());
      break;
    }
    take(at, n.resource, bestAt);
    take(n.resource == Resource::Dma ? at : best->from, Resource::FixedLatency, anchorOf(*best));
    at = best->from;
    viaEnd = best->fromEnd;
  }
  std::array<Tick, kNumResources> sums{};
  std::vector<bool> counted(nodes_.size(), false);
  for (auto p = reversed.rbegin(); p != reversed.rend(); ++p) {
    path.pieces.push_back({p->span, p->resource, p->from.ns(), p->to.ns()});
    sums[static_cast<size_t>(p->resource)] += p->to - p->from;
    if (!counted[p->span]) ++path.events, counted[p->span] = true;
  }
  for (size_t r = 0; r < sums.size(); ++r) path.resourceNs[r] = sums[r].ns();
  path.bound = static_cast<Resource>(
      std::max_element(path.resourceNs.begin(), path.resourceNs.end()) - path.resourceNs.begin());
  return path;
}

}  // namespace neuronsim::traces
