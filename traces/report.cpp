// Report analyses: opcode and stall tables, critical path, warnings, and their text.
#include "traces/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <unordered_map>

#include "traces/dma_efficiency.h"
#include "traces/engine_time.h"
#include "traces/phases.h"
#include "traces/summary.h"
#include "traces/tick.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  return std::string(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
}

/// `part` as a percentage of `whole` (0 when the whole is empty).
double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0;
}

}  // namespace

std::vector<OpcodeTime> opcodeTimes(const TraceModel& model) {
  std::map<std::pair<std::string, std::string>, OpcodeTime> table;
  for (const Span& s : model.spans) {
    OpcodeTime& t = table[{s.track, s.opcode}];
    t.track = s.track;
    t.opcode = s.opcode;
    ++t.count;
    t.ns += s.endNs - s.startNs;
  }
  std::vector<OpcodeTime> rows;
  for (auto& [key, row] : table) rows.push_back(row);
  std::stable_sort(rows.begin(), rows.end(), [](const OpcodeTime& a, const OpcodeTime& b) {
    int ra = trackRank(a.track), rb = trackRank(b.track);
    return ra != rb ? ra < rb : a.ns > b.ns;
  });
  return rows;
}

std::vector<StallTime> stallTimes(const TraceModel& model) {
  std::map<std::pair<std::string, std::string>, StallTime> table;
  for (const Span& s : model.spans) {
    if (s.stallNs <= 0) continue;
    StallTime& t = table[{s.track, s.stallCause}];
    t.track = s.track;
    t.cause = s.stallCause;
    ++t.count;
    t.ns += s.stallNs;
  }
  std::vector<StallTime> rows;
  for (auto& [key, row] : table) rows.push_back(row);
  std::stable_sort(rows.begin(), rows.end(), [](const StallTime& a, const StallTime& b) {
    int ra = trackRank(a.track), rb = trackRank(b.track);
    return ra != rb ? ra < rb : a.ns > b.ns;
  });
  return rows;
}

std::vector<size_t> longestStalls(const TraceModel& model, size_t count) {
  std::vector<size_t> stalled;
  for (size_t i = 0; i < model.spans.size(); ++i)
    if (!model.spans[i].isDma && model.spans[i].stallNs > 0) stalled.push_back(i);
  const size_t n = std::min(count, stalled.size());
  std::partial_sort(
      stalled.begin(), stalled.begin() + static_cast<std::ptrdiff_t>(n), stalled.end(),
      [&](size_t a, size_t b) { return model.spans[a].stallNs > model.spans[b].stallNs; });
  stalled.resize(n);
  return stalled;
}

CriticalPath criticalPath(const TraceModel& model) {
  return DependencyGraph(model).criticalPath();
}

std::string verdictText(const CriticalPath& path, const std::vector<WhatIf>& whatIfs) {
  if (path.empty()) return "no events";
  const double share = percent(path.resourceNs[static_cast<size_t>(path.bound)], path.totalNs);
  std::string out = format("bound by %s (%.1f%% of the critical path)",
                           std::string(resourceName(path.bound)).c_str(), share);
  if (!whatIfs.empty() && whatIfs.front().endNs < path.totalNs) {
    const WhatIf& best = whatIfs.front();
    out += format(
        "; largest upside: %s infinitely fast would take %.3f us instead of %.3f us (-%.1f%%)",
        std::string(resourceName(best.resource)).c_str(), best.endNs / 1000, path.totalNs / 1000,
        100.0 * (path.totalNs - best.endNs) / path.totalNs);
  }
  return out;
}

std::vector<std::string> traceWarnings(const TraceModel& model) {
  std::vector<std::string> out;
  int64_t smallCount = 0, smallBytes = 0, example = -1;
  for (const Span& s : model.spans) {
    if (!s.isDma || s.bytesPerPartition >= kSmallDmaBytesPerPartition) continue;
    ++smallCount;
    smallBytes += s.bytes;
    if (example < 0) example = s.index;
  }
  if (smallCount > 0)
    out.push_back(format(
        "%lld DMA transfers move under %lld bytes per partition (%lld bytes in all, first is "
        "instruction %lld): overhead-bound, batch them into larger transfers",
        static_cast<long long>(smallCount), static_cast<long long>(kSmallDmaBytesPerPartition),
        static_cast<long long>(smallBytes), static_cast<long long>(example)));

  std::vector<const Span*> pe;
  const bool hasThrottle = model.machine.flag("pe_throttle", false);
  const double throttleGapNs = model.machine.number("throttle_window_ns", kThrottleGapNs);
  for (const Span& s : model.spans)
    if (hasThrottle && !s.isDma && s.track == "tensor") pe.push_back(&s);
  std::stable_sort(pe.begin(), pe.end(),
                   [](const Span* a, const Span* b) { return a->startNs < b->startNs; });
  int64_t gaps = 0;
  double gapNs = 0, longest = 0, end = pe.empty() ? 0 : pe.front()->endNs;
  for (size_t k = 1; k < pe.size(); ++k) {
    const double gap = pe[k]->startNs - end;
    if (gap > throttleGapNs) {
      ++gaps;
      gapNs += gap;
      longest = std::max(longest, gap);
    }
    end = std::max(end, pe[k]->endNs);
  }
  if (gaps > 0)
    out.push_back(
        format("%lld PE idle gaps over %.0f ns (%.3f us in all, longest %.3f us) re-trigger the "
               "throttle: keep TensorE fed",
               static_cast<long long>(gaps), throttleGapNs, gapNs / 1000, longest / 1000));

  int64_t throttled = 0;
  double throttleNs = 0;
  for (const Span& s : model.spans)
    if (s.stallCause == "throttle" && s.stallNs > 0) ++throttled, throttleNs += s.stallNs;
  if (throttled > 0)
    out.push_back(format("%lld instructions stalled %.3f us on the PE throttle",
                         static_cast<long long>(throttled), throttleNs / 1000));

  for (const auto& [index, what] : model.uninitializedReads)
    out.push_back(format("instruction %lld reads uninitialized memory: %s",
                         static_cast<long long>(index), what.c_str()));

  const double total = model.summary.value("total_ns", 0.0);
  const double span = model.maxEndNs - model.minStartNs;
  const Tick spanTicks = Tick::fromNs(model.maxEndNs) - Tick::fromNs(model.minStartNs);
  if (total > 0 && spanTicks != Tick::fromNs(total) && !model.spans.empty())
    out.push_back(
        format("trace span %.3f ns differs from the summary's total_ns %.3f ns", span, total));
  return out;
}

namespace {

std::string percentOf(double ns, double total) {
  return format("%5.1f%%", percent(ns, total));
}

void criticalSection(std::string& out, const CriticalPath& path, const std::vector<WhatIf>& whatIfs,
                     bool exact) {
  out += fmt::format("\ncritical path by resource ({} events):\n", path.events);
  for (int r = 0; r < kNumResources; ++r) {
    const double ns = path.resourceNs[static_cast<size_t>(r)];
    if (ns > 0)
      out += format("  %-14s %12.3f us %s\n",
                    std::string(resourceName(static_cast<Resource>(r))).c_str(), ns / 1000,
                    percentOf(ns, path.totalNs).c_str());
  }
  out += exact ? "\nwhat if (kernel time with one resource infinitely fast, from the dependency "
                 "graph):\n"
               : "\nwhat if (from the recorded stall edges only: this trace lacks the full wait "
                 "list):\n";
  if (whatIfs.empty()) out += "  unavailable\n";
  for (const WhatIf& w : whatIfs)
    out += format("  %-14s %12.3f us  saves %10.3f us %s\n",
                  std::string(resourceName(w.resource)).c_str(), w.endNs / 1000,
                  (path.totalNs - w.endNs) / 1000,
                  percentOf(path.totalNs - w.endNs, path.totalNs).c_str());
}

void engineSection(std::string& out, const TraceModel& model, double total) {
  out +=
      "\nengine time (dependency: head instruction waiting on a producer that had started; "
      "starved: the\n"
      "producer had not started, nothing to do; internal: interlock, throttle, port conflicts; "
      "done: after\n"
      "the engine's last instruction):\n";
  out += format("  %-7s %9s %9s %9s %9s %9s  %s\n", "engine", "busy", "dependency", "starved",
                "internal", "done", "waiting mostly on");
  for (const EngineTime& t : engineTimes(model, total)) {
    std::string on = "-";
    if (!t.producers.empty()) {
      const ProducerWait& p = t.producers.front();
      on = format("%s %.3f us (%lld waits, longest #%lld %.3f us)", p.producer.c_str(), p.ns / 1000,
                  static_cast<long long>(p.count), static_cast<long long>(p.longestIndex),
                  p.longestNs / 1000);
    }
    out += format("  %-7s %9s %9s %9s %9s %9s  %s\n", t.engine.c_str(),
                  percentOf(t.busyNs, total).c_str(), percentOf(t.dependencyNs, total).c_str(),
                  percentOf(t.starvedNs, total).c_str(), percentOf(t.internalNs, total).c_str(),
                  percentOf(t.doneNs, total).c_str(), on.c_str());
  }
}

std::string sizeLabel(int64_t bytes) {
  return bytes >= 1024 ? format("%lldK", static_cast<long long>(bytes / 1024))
                       : format("%lld", static_cast<long long>(bytes));
}

void dmaSection(std::string& out, const TraceModel& model, double total) {
  const DmaEfficiency dma = dmaEfficiency(model);
  if (dma.transfers == 0) return;
  out += "\nDMA efficiency:\n";
  if (dma.peakKnown)
    out += format(
        "  %lld transfers, %lld bytes; bytes-weighted %.1f%% of peak (peak per transfer: its DMA "
        "engines x "
        "%.1f GB/s, capped by HBM %.1f GB/s)\n",
        static_cast<long long>(dma.transfers), static_cast<long long>(dma.bytes),
        dma.weightedPercent, dma.engineBytesPerNs, dma.hbmBytesPerNs);
  else
    out += "  peak unknown: this trace does not record its machine\n";
  if (dma.peakKnown) {
    out += format("  %-16s %9s %14s %12s\n", "achieved/peak", "transfers", "bytes", "time us");
    for (const EfficiencyBucket& b : dma.efficiency)
      if (b.transfers > 0)
        out += format("  %-16s %9lld %14lld %12.3f\n",
                      (b.highPercent > 0 ? format("%.0f-%.0f%%", b.lowPercent, b.highPercent)
                                         : format(">= %.0f%%", b.lowPercent))
                          .c_str(),
                      static_cast<long long>(b.transfers), static_cast<long long>(b.bytes),
                      b.ns / 1000);
  }
  out += format("  %-16s %9s %14s %12s\n", "bytes/partition", "transfers", "bytes", "time us");
  for (const SizeBucket& b : dma.sizes)
    if (b.transfers > 0)
      out += format(
          "  %-16s %9lld %14lld %12.3f\n",
          (b.highBytes > 0 ? fmt::format("{}-{}", sizeLabel(b.lowBytes), sizeLabel(b.highBytes))
                           : fmt::format(">= {}", sizeLabel(b.lowBytes)))
              .c_str(),
          static_cast<long long>(b.transfers), static_cast<long long>(b.bytes), b.ns / 1000);
  for (const TriggerOverhead& t : dma.triggers)
    out += format("  triggers on %-7s %5lld, %10.3f us = %s of its busy time, %s of the run\n",
                  t.engine.c_str(), static_cast<long long>(t.triggers), t.ns / 1000,
                  percentOf(t.ns, t.engineBusyNs).c_str(), percentOf(t.ns, total).c_str());
  out += format("  %-9s %9s %14s %10s %10s %12s\n", "queue", "transfers", "bytes", "occupied",
                "GB/s busy", "avg latency");
  for (const QueueUse& q : dma.queues)
    out += format("  %-9s %9lld %14lld %10s %10.1f %9.3f us\n", q.queue.c_str(),
                  static_cast<long long>(q.transfers), static_cast<long long>(q.bytes),
                  percentOf(q.activeNs, total).c_str(), q.gbps(),
                  q.latencyNs / 1000 / static_cast<double>(std::max<int64_t>(1, q.transfers)));
  if (!dma.slowest.empty()) {
    out += "  furthest below peak:\n";
    for (size_t i : dma.slowest) {
      const Span& s = model.spans[i];
      const double dur = s.endNs - s.startNs;
      const double gbps = dur > 0 ? static_cast<double>(s.bytes) / dur : 0;
      out += format("    #%-6lld %-8s %10lld B (%lld B/partition) %8.1f GB/s of %.1f\n",
                    static_cast<long long>(s.index), s.track.c_str(),
                    static_cast<long long>(s.bytes), static_cast<long long>(s.bytesPerPartition),
                    gbps, transferPeakGbps(s, model.machine));
    }
  }
}

/// `name` in at most `width` characters: a longer one keeps its end ("...les/softmax.py:35"),
/// where a source location's file and line are.
std::string phaseLabel(const std::string& name, size_t width) {
  return name.size() <= width ? name : fmt::format("...{}", name.substr(name.size() - (width - 3)));
}

void phaseSection(std::string& out, const TraceModel& model, const CriticalPath& path) {
  constexpr size_t kMinWidth = 28, kMaxWidth = 40;
  const auto phases = phaseTimes(model, path);
  if (phases.empty()) return;
  size_t width = kMinWidth;
  for (const PhaseTime& p : phases) width = std::min(kMaxWidth, std::max(width, p.name.size()));
  const int w = static_cast<int>(width);
  out += "\nphases (instruction notes), in order of first start:\n";
  out += format("  %-*s %6s %6s %10s %10s %10s  %s\n", w, "phase", "instr", "dma", "from us",
                "to us", "critical", "busy by resource (us)");
  for (const PhaseTime& p : phases) {
    std::string busy;
    for (int r = 0; r < kNumResources; ++r)
      if (p.busyNs[static_cast<size_t>(r)] > 0)
        busy += format("%s%s %.3f", busy.empty() ? "" : ", ",
                       std::string(resourceName(static_cast<Resource>(r))).c_str(),
                       p.busyNs[static_cast<size_t>(r)] / 1000);
    out += format("  %-*s %6lld %6lld %10.3f %10.3f %10s  %s\n", w,
                  phaseLabel(p.name, width).c_str(), static_cast<long long>(p.instructions),
                  static_cast<long long>(p.transfers), p.firstStartNs / 1000, p.lastEndNs / 1000,
                  percentOf(p.criticalNs, path.totalNs).c_str(), busy.c_str());
  }
}

void chainSection(std::string& out, const TraceModel& model, const CriticalPath& path) {
  struct Segment {
    std::string label;
    double from, to;
    int pieces;
  };
  std::vector<Segment> segments;
  for (const PathPiece& p : path.pieces) {
    const std::string label =
        p.resource == Resource::FixedLatency ? "latency" : model.spans[p.span].track;
    if (!segments.empty() && segments.back().label == label) {
      segments.back().to = p.toNs;
      ++segments.back().pieces;
    } else {
      segments.push_back({label, p.fromNs, p.toNs, 1});
    }
  }
  const size_t first = segments.size() > 12 ? segments.size() - 12 : 0;
  out += fmt::format("\ncritical path chain (last {} of {} segments):\n", segments.size() - first,
                     segments.size());
  for (size_t k = first; k < segments.size(); ++k)
    out += format("  %10.3f - %10.3f us  %-10s %d pieces\n", segments[k].from / 1000,
                  segments[k].to / 1000, segments[k].label.c_str(), segments[k].pieces);
}

}  // namespace

std::string analysisText(const TraceModel& model) {
  const double total = std::max(model.summary.value("total_ns", 0.0), model.maxEndNs);
  const DependencyGraph graph(model);
  const CriticalPath path = graph.criticalPath();
  const std::vector<WhatIf> whatIfs = graph.whatIfs();
  const bool exact = std::all_of(model.spans.begin(), model.spans.end(),
                                 [](const Span& s) { return s.isDma || s.waitsKnown; });
  std::string out = fmt::format("verdict: {}\n", verdictText(path, whatIfs));
  if (!path.empty()) criticalSection(out, path, whatIfs, exact);
  engineSection(out, model, total);
  dmaSection(out, model, total);
  phaseSection(out, model, path);
  return out;
}

std::string reportText(const TraceModel& model, int topOpcodes) {
  std::string out = summaryText(model.summary);
  const double total = std::max(model.summary.value("total_ns", 0.0), model.maxEndNs);
  out +=
      model.machine.known()
          ? fmt::format("  machine parameters recorded: {}\n", model.machine.name)
          : "  machine parameters not recorded (older trace): machine-specific warnings skipped\n";
  out += "\n";
  out += analysisText(model);
  const CriticalPath path = criticalPath(model);

  out += "\ntop opcodes by time (per engine and queue):\n";
  out += format("  %-10s %-22s %8s %12s %7s\n", "track", "opcode", "count", "time us", "share");
  std::map<std::string, int> shown;
  for (const OpcodeTime& row : opcodeTimes(model)) {
    if (shown[row.track]++ >= topOpcodes) continue;
    out += format("  %-10s %-22s %8lld %12.3f %6.1f%%\n", row.track.c_str(), row.opcode.c_str(),
                  static_cast<long long>(row.count), row.ns / 1000, percent(row.ns, total));
  }

  const auto longest = longestStalls(model, 5);
  if (!longest.empty()) {
    std::unordered_map<int64_t, const Span*> byIndex;
    for (const Span& s : model.spans)
      if (s.isDma || !byIndex.count(s.index)) byIndex[s.index] = &s;
    out += "\nlongest stalls:\n";
    for (size_t i : longest) {
      const Span& s = model.spans[i];
      std::string why = s.stallCause;
      if (!s.semaphore.empty()) why += fmt::format(" on {} >= {}", s.semaphore, s.waitValue);
      if (s.waitedOn >= 0) {
        why += fmt::format(", released by #{}", s.waitedOn);
        if (auto it = byIndex.find(s.waitedOn); it != byIndex.end())
          why += fmt::format(" ({})", it->second->track);
      }
      out += format("  #%-6lld %-8s %-22s %10.3f us  %s\n", static_cast<long long>(s.index),
                    s.track.c_str(), s.opcode.c_str(), s.stallNs / 1000, why.c_str());
    }
  }

  if (!path.empty()) chainSection(out, model, path);

  out += "\nwarnings:\n";
  const auto warnings = traceWarnings(model);
  if (warnings.empty()) out += "  none\n";
  for (const auto& w : warnings) out += fmt::format("  - {}\n", w);
  return out;
}

}  // namespace neuronsim::traces
