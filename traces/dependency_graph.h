#pragma once
// A run's dependency graph rebuilt from its trace: the critical path totalled by kind of resource,
// and what-if estimates (the kernel's time with one resource infinitely fast).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/tick.h"
#include "traces/trace_model.h"

namespace neuronsim::traces {

/// What a stretch of time belongs to. DmaTrigger is the issuing engines' time spent triggering
/// DMAs; FixedLatency the DMA latency (trigger to first byte) and the engines' pipeline latency
/// (end to Complete signal).
enum class Resource : uint8_t {
  Tensor,
  Vector,
  Scalar,
  GpSimd,
  Sync,
  Dma,
  DmaTrigger,
  FixedLatency
};
inline constexpr int kNumResources = 8;
std::string_view resourceName(Resource resource);  // TensorE, VectorE, ScalarE, GpSimd, Sync, DMA,
                                                   // DMA triggers, fixed latency

/// The resource a span's own time belongs to: a DMA transfer is Dma; a DMA instruction on an
/// engine is DmaTrigger; any other instruction is its engine.
Resource spanResource(const Span& span);

/// One stretch of the critical path.
struct PathPiece {
  size_t span = 0;  ///< index into model.spans of the event that owns it
  Resource resource = Resource::Tensor;
  double fromNs = 0;
  double toNs = 0;
};

/// The chain of events that ends last, walked back through whatever bound each event's start.
/// The pieces partition [0, totalNs], so resourceNs adds up to totalNs.
struct CriticalPath {
  std::vector<PathPiece> pieces;  ///< first piece first
  size_t events = 0;              ///< distinct events on the path
  std::array<double, kNumResources> resourceNs{};
  Resource bound = Resource::Tensor;  ///< the resource with the largest total
  double totalNs = 0;
  bool empty() const { return pieces.empty(); }
};

/// The kernel's time with one resource taking no time.
struct WhatIf {
  Resource resource = Resource::Tensor;
  double endNs = 0;  ///< estimated kernel time
};

/// Each span is a node; its start is the latest of its in-edges (the producer's start or end
/// plus a fixed lag) plus a residual the graph does not explain (bandwidth sharing, throttle,
/// LoadStationary), charged to the span's own resource. Edges:
/// - the previous instruction of the same engine (engines are in order: stream order is start
///   order on the engine's track);
/// - every semaphore wait, from the instruction whose signal released it (`Span::waits`), anchored
///   at the producer's end when the release came at or after it (lag = pipeline latency) else its
///   start; plus the recorded `waited_on` of a semaphore stall when the waits do not list it
///   (traces written before waits were recorded, hand-built programs without waits);
/// - an interlock stall (engine_busy), from the instruction it waited on; and an interlock the
///   simulator did not name (it records one cause, so a semaphore wait followed by an interlock
///   shows only the wait): a VectorE/ScalarE/GpSimd instruction still waiting after its other
///   edges, from the earlier instruction of its engine whose results landed exactly at its start
///   (end + the recorded pipeline latency);
/// - a transfer, from its trigger instruction with the DMA latency as lag, and from the previous
///   transfer of its queue when that one had ended before it started.
/// Times are integer ticks inside (the trace's ns rounded to the picosecond), so edges and ties
/// are found by exact comparison; results are given in ns.
/// Replaying the graph with the recorded durations gives back the recorded times exactly.
class DependencyGraph {
 public:
  explicit DependencyGraph(const TraceModel& model);

  /// The recorded end of the run (latest span end).
  double endNs() const { return end_.ns(); }
  /// False when the graph has a cycle (a malformed trace): what-if estimates are then unavailable.
  bool acyclic() const { return order_.size() == nodes_.size(); }
  /// Replays the graph with every span of `resource` taking no time and no residual (for
  /// FixedLatency: every lag zero) and returns the new end.
  double endWithout(Resource resource) const;
  /// Replays the graph unchanged (equals endNs(); a self-check).
  double replayedEndNs() const;
  /// Per resource, the summed residuals: start time no edge explains (bandwidth sharing, throttle).
  std::array<double, kNumResources> residualNs() const;
  /// endWithout for every resource that has time in the run, fastest first.
  std::vector<WhatIf> whatIfs() const;
  CriticalPath criticalPath() const;

 private:
  /// Start constraint: start >= (from's start or end) + lag.
  struct Edge {
    size_t from;
    bool fromEnd;
    Tick lag;
    bool stream;  ///< the previous event of the same stream (preferred last on ties)
  };
  /// A span with its in-edges.
  struct Node {
    Tick start;
    Tick end;
    Tick residual;
    Resource resource = Resource::Tensor;
    std::vector<Edge> in;
  };

  void addEdge(size_t to, size_t from, Tick release, bool stream);
  /// The producer's time an edge leaves from (its start or end).
  Tick anchorOf(const Edge& edge) const;
  /// The latest of a node's in-edges (0 without edges).
  Tick boundOf(const Node& node) const;
  Tick replay(int skipResource) const;

  std::vector<Node> nodes_;
  std::vector<size_t> order_;  ///< topological
  Tick end_;
};

}  // namespace neuronsim::traces
