// Dependency graph of a trace: edges, residuals, replay with a resource removed, critical path.
#include "traces/dependency_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace neuronsim::traces {

namespace {

constexpr double kEps = 1e-6;
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
    nodes_[i].startNs = s.startNs;
    nodes_[i].endNs = std::max(s.startNs, s.endNs);
    nodes_[i].resource = spanResource(s);
    (s.isDma ? dmaOf : instructionOf).emplace(s.index, i);
    byTrack[s.track].push_back(i);
    endNs_ = std::max(endNs_, nodes_[i].endNs);
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
      if (dma && nodes_[prev].endNs > nodes_[cur].startNs + kEps) continue;
      addEdge(cur, prev, nodes_[prev].endNs, true);
    }
  }

  // 2. Semaphores, interlocks and DMA triggers.
  double dmaLatency = model.machine.number("dma_latency_ns", -1);
  if (dmaLatency < 0) {
    dmaLatency = std::numeric_limits<double>::infinity();
    for (const Span& s : model.spans)
      if (s.isDma) dmaLatency = std::min(dmaLatency, s.startNs - s.readyNs);
  }
  for (size_t i = 0; i < model.spans.size(); ++i) {
    const Span& s = model.spans[i];
    if (s.isDma) {
      if (auto it = instructionOf.find(s.index); it != instructionOf.end())
        addEdge(i, it->second, s.readyNs + std::clamp(s.startNs - s.readyNs, 0.0, dmaLatency),
                false);
      continue;
    }
    bool bindingListed = false;
    for (const Release& r : s.waits)
      if (int64_t from = r.producer >= 0 ? producer(r.producer) : -1; from >= 0) {
        addEdge(i, static_cast<size_t>(from), r.ns, false);
        bindingListed = bindingListed || r.producer == s.waitedOn;
      }
    if (s.stallCause == "semaphore" && s.waitedOn >= 0 && !bindingListed)
      if (int64_t from = producer(s.waitedOn); from >= 0)
        addEdge(i, static_cast<size_t>(from), s.startNs, false);
    if (s.stallCause == "engine_busy" && s.waitedOn >= 0)
      if (auto it = instructionOf.find(s.waitedOn); it != instructionOf.end())
        addEdge(i, it->second, s.startNs, false);
  }

  // 3. Interlocks the simulator did not name (it records one stall cause: a semaphore wait
  //    followed by an interlock shows only the wait): an engine instruction still waiting after its
  //    edges, whose start is exactly when an earlier instruction of its engine landed its results.
  for (auto& [track, list] : byTrack) {
    if (model.spans[list.front()].isDma) continue;
    const Resource engine = engineResource(track);
    if (engine == Resource::Tensor || engine == Resource::Sync) continue;
    const double latency = model.machine.pipelineLatencyNs[static_cast<size_t>(engine)];
    for (size_t k = 1; k < list.size(); ++k) {
      Node& n = nodes_[list[k]];
      if (n.resource != engine || n.startNs - boundOf(n) <= kEps) continue;
      for (size_t back = 1; back <= std::min<size_t>(k, kInterlockDepth); ++back) {
        const size_t from = list[k - back];
        if (std::abs(nodes_[from].endNs + latency - n.startNs) <= kEps) {
          addEdge(list[k], from, n.startNs, false);
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
    double bound = 0;
    for (const Edge& e : n.in) {
      bound =
          std::max(bound, (e.fromEnd ? nodes_[e.from].endNs : nodes_[e.from].startNs) + e.lagNs);
      out[e.from].push_back(i);
    }
    n.residualNs = std::max(0.0, n.startNs - bound);
    pending[i] = n.in.size();
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (pending[i] == 0) order_.push_back(i);
  for (size_t k = 0; k < order_.size(); ++k)
    for (size_t next : out[order_[k]])
      if (--pending[next] == 0) order_.push_back(next);
}

double DependencyGraph::boundOf(const Node& node) const {
  double bound = 0;
  for (const Edge& e : node.in)
    bound = std::max(bound, (e.fromEnd ? nodes_[e.from].endNs : nodes_[e.from].startNs) + e.lagNs);
  return bound;
}

void DependencyGraph::addEdge(size_t to, size_t from, double releaseNs, bool stream) {
  if (from == to) return;
  const Node& source = nodes_[from];
  releaseNs = std::min(releaseNs, nodes_[to].startNs);
  const bool fromEnd = releaseNs >= source.endNs - kEps;
  const double anchor = fromEnd ? source.endNs : source.startNs;
  if (anchor > nodes_[to].startNs + kEps) return;  // not a predecessor in time: a malformed record
  nodes_[to].in.push_back({from, fromEnd, std::max(0.0, releaseNs - anchor), stream});
}

double DependencyGraph::replay(int skip) const {
  std::vector<double> start(nodes_.size()), end(nodes_.size());
  const bool noLatency = skip == static_cast<int>(Resource::FixedLatency);
  double last = 0;
  for (size_t i : order_) {
    const Node& n = nodes_[i];
    double t = 0;
    for (const Edge& e : n.in)
      t = std::max(t, (e.fromEnd ? end[e.from] : start[e.from]) + (noLatency ? 0 : e.lagNs));
    const bool skipped = static_cast<int>(n.resource) == skip;
    start[i] = t + (skipped ? 0 : n.residualNs);
    end[i] = start[i] + (skipped ? 0 : n.endNs - n.startNs);
    last = std::max(last, end[i]);
  }
  return last;
}

std::array<double, kNumResources> DependencyGraph::residualNs() const {
  std::array<double, kNumResources> sums{};
  for (const Node& n : nodes_) sums[static_cast<size_t>(n.resource)] += n.residualNs;
  return sums;
}

double DependencyGraph::endWithout(Resource resource) const {
  return replay(static_cast<int>(resource));
}

double DependencyGraph::replayedEndNs() const {
  return replay(-1);
}

std::vector<WhatIf> DependencyGraph::whatIfs() const {
  std::array<bool, kNumResources> present{};
  for (const Node& n : nodes_) {
    if (n.endNs > n.startNs || n.residualNs > 0) present[static_cast<size_t>(n.resource)] = true;
    for (const Edge& e : n.in) present[static_cast<size_t>(Resource::FixedLatency)] |= e.lagNs > 0;
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
    if (nodes_[i].endNs > nodes_[at].endNs) at = i;
  path.totalNs = nodes_[at].endNs;
  double cursor = path.totalNs;
  std::vector<PathPiece> reversed;
  auto take = [&](size_t span, Resource resource, double fromNs) {
    fromNs = std::max(0.0, fromNs);
    if (fromNs < cursor) {
      reversed.push_back({span, resource, fromNs, cursor});
      cursor = fromNs;
    }
  };
  std::vector<bool> visited(nodes_.size(), false);
  bool viaEnd = true;
  while (true) {
    visited[at] = true;
    const Node& n = nodes_[at];
    if (viaEnd) take(at, n.resource, n.startNs);
    const Edge* best = nullptr;
    double bestNs = -1;
    for (const Edge& e : n.in) {
      const double t = (e.fromEnd ? nodes_[e.from].endNs : nodes_[e.from].startNs) + e.lagNs;
      if (!best || t > bestNs + kEps || (t > bestNs - kEps && best->stream && !e.stream)) {
        best = &e;
        bestNs = t;
      }
    }
    if (!best || visited[best->from]) {
      take(at, n.resource, 0);
      break;
    }
    take(at, n.resource, bestNs);
    const double anchor = best->fromEnd ? nodes_[best->from].endNs : nodes_[best->from].startNs;
    take(n.resource == Resource::Dma ? at : best->from, Resource::FixedLatency, anchor);
    at = best->from;
    viaEnd = best->fromEnd;
  }
  path.pieces.assign(reversed.rbegin(), reversed.rend());
  std::vector<bool> counted(nodes_.size(), false);
  for (const PathPiece& p : path.pieces) {
    path.resourceNs[static_cast<size_t>(p.resource)] += p.toNs - p.fromNs;
    if (!counted[p.span]) ++path.events, counted[p.span] = true;
  }
  path.bound = static_cast<Resource>(
      std::max_element(path.resourceNs.begin(), path.resourceNs.end()) - path.resourceNs.begin());
  return path;
}

}  // namespace neuronsim::traces
