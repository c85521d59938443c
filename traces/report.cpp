// Report analyses: opcode and stall tables, critical path, warnings, and their text.
#include "traces/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <unordered_map>

#include "traces/summary.h"
#include "traces/track_layout.h"

namespace neuronsim::traces {

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  return std::string(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
}

/// Per base track, the spans in start order.
std::map<std::string, std::vector<size_t>> streams(const TraceModel& model) {
  std::map<std::string, std::vector<size_t>> byTrack;
  for (size_t i = 0; i < model.spans.size(); ++i) byTrack[model.spans[i].track].push_back(i);
  for (auto& [track, list] : byTrack)
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return model.spans[a].startNs < model.spans[b].startNs;
    });
  return byTrack;
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
  CriticalPath path;
  if (model.spans.empty()) return path;
  const auto byTrack = streams(model);
  std::vector<int64_t> previous(model.spans.size(), -1);
  for (const auto& [track, list] : byTrack)
    for (size_t k = 1; k < list.size(); ++k) previous[list[k]] = static_cast<int64_t>(list[k - 1]);
  std::unordered_map<int64_t, size_t> instructionOf, dmaOf;
  for (size_t i = 0; i < model.spans.size(); ++i)
    (model.spans[i].isDma ? dmaOf : instructionOf)[model.spans[i].index] = i;

  auto predecessor = [&](size_t i) -> int64_t {
    const Span& s = model.spans[i];
    if (s.isDma) {
      int64_t trigger = -1;
      if (auto it = instructionOf.find(s.index); it != instructionOf.end())
        trigger = static_cast<int64_t>(it->second);
      int64_t queued = previous[i];
      if (queued >= 0 && model.spans[static_cast<size_t>(queued)].endNs > s.startNs + 1e-6)
        queued = -1;
      if (trigger < 0) return queued;
      if (queued < 0) return trigger;
      return model.spans[static_cast<size_t>(queued)].endNs >
                     model.spans[static_cast<size_t>(trigger)].endNs
                 ? queued
                 : trigger;
    }
    if (s.stallCause == "semaphore" && s.waitedOn >= 0) {
      if (auto it = dmaOf.find(s.waitedOn); it != dmaOf.end())
        return static_cast<int64_t>(it->second);
      if (auto it = instructionOf.find(s.waitedOn); it != instructionOf.end())
        return static_cast<int64_t>(it->second);
    }
    return previous[i];
  };

  size_t last = 0;
  for (size_t i = 1; i < model.spans.size(); ++i)
    if (model.spans[i].endNs > model.spans[last].endNs) last = i;
  std::vector<bool> visited(model.spans.size(), false);
  std::vector<size_t> reversed;
  for (int64_t at = static_cast<int64_t>(last); at >= 0 && !visited[static_cast<size_t>(at)];
       at = predecessor(static_cast<size_t>(at))) {
    visited[static_cast<size_t>(at)] = true;
    reversed.push_back(static_cast<size_t>(at));
  }
  path.steps.assign(reversed.rbegin(), reversed.rend());
  path.totalNs = model.spans[last].endNs;
  double cursor = path.totalNs;
  std::map<std::string, double> share;
  path.ownedNs.assign(path.steps.size(), 0.0);
  for (size_t k = path.steps.size(); k-- > 0;) {
    const double predEnd = k > 0 ? std::min(model.spans[path.steps[k - 1]].endNs, cursor) : 0.0;
    path.ownedNs[k] = std::max(0.0, cursor - predEnd);
    share[model.spans[path.steps[k]].track] += path.ownedNs[k];
    cursor = std::min(cursor, predEnd);
  }
  for (auto& [track, ns] : share) path.shareNs.emplace_back(track, ns);
  std::stable_sort(path.shareNs.begin(), path.shareNs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!path.shareNs.empty()) path.bound = path.shareNs.front().first;
  return path;
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
  for (const Span& s : model.spans)
    if (!s.isDma && s.track == "tensor") pe.push_back(&s);
  std::stable_sort(pe.begin(), pe.end(),
                   [](const Span* a, const Span* b) { return a->startNs < b->startNs; });
  int64_t gaps = 0;
  double gapNs = 0, longest = 0, end = pe.empty() ? 0 : pe.front()->endNs;
  for (size_t k = 1; k < pe.size(); ++k) {
    const double gap = pe[k]->startNs - end;
    if (gap > kThrottleGapNs) {
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
               static_cast<long long>(gaps), kThrottleGapNs, gapNs / 1000, longest / 1000));

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
  if (total > 0 && std::fabs(span - total) > 1e-3 * std::max(1.0, total) && !model.spans.empty())
    out.push_back(
        format("trace span %.3f ns differs from the summary's total_ns %.3f ns", span, total));
  return out;
}

std::string reportText(const TraceModel& model, int topOpcodes) {
  std::string out = summaryText(model.summary);
  const double total = std::max(model.summary.value("total_ns", 0.0), 1e-12);

  out += "\ntop opcodes by time (per engine and queue):\n";
  out += format("  %-10s %-22s %8s %12s %7s\n", "track", "opcode", "count", "time us", "share");
  std::map<std::string, int> shown;
  for (const OpcodeTime& row : opcodeTimes(model)) {
    if (shown[row.track]++ >= topOpcodes) continue;
    out += format("  %-10s %-22s %8lld %12.3f %6.1f%%\n", row.track.c_str(), row.opcode.c_str(),
                  static_cast<long long>(row.count), row.ns / 1000, 100.0 * row.ns / total);
  }

  out += "\nstall time by cause (instruction waits; DMA latency from issue to first byte):\n";
  const auto stalls = stallTimes(model);
  if (stalls.empty()) out += "  none\n";
  for (const StallTime& row : stalls)
    out += format("  %-10s %-16s %8lld %12.3f us %6.1f%%\n", row.track.c_str(), row.cause.c_str(),
                  static_cast<long long>(row.count), row.ns / 1000, 100.0 * row.ns / total);

  const auto longest = longestStalls(model, 5);
  if (!longest.empty()) {
    out += "\nlongest stalls:\n";
    for (size_t i : longest) {
      const Span& s = model.spans[i];
      std::string why = s.stallCause;
      if (!s.semaphore.empty()) why += " on " + s.semaphore + " >= " + std::to_string(s.waitValue);
      if (s.waitedOn >= 0) why += ", released by #" + std::to_string(s.waitedOn);
      out += format("  #%-6lld %-8s %-22s %10.3f us  %s\n", static_cast<long long>(s.index),
                    s.track.c_str(), s.opcode.c_str(), s.stallNs / 1000, why.c_str());
    }
  }

  const CriticalPath path = criticalPath(model);
  out += "\ncritical path:\n";
  if (path.steps.empty()) {
    out += "  (no events)\n";
  } else {
    out += format("  %zu events, ends at %.3f us; bound by %s\n", path.steps.size(),
                  path.totalNs / 1000, path.bound.c_str());
    for (const auto& [track, ns] : path.shareNs)
      out += format("  %-10s %12.3f us %6.1f%%\n", track.c_str(), ns / 1000,
                    100.0 * ns / path.totalNs);
    struct Segment {
      std::string track;
      double from, to;
      int events;
    };
    std::vector<Segment> segments;
    double cursor = 0;
    for (size_t k = 0; k < path.steps.size(); ++k) {
      const Span& s = model.spans[path.steps[k]];
      const double to = cursor + path.ownedNs[k];
      if (!segments.empty() && segments.back().track == s.track) {
        segments.back().to = to;
        ++segments.back().events;
      } else {
        segments.push_back({s.track, cursor, to, 1});
      }
      cursor = to;
    }
    const size_t first = segments.size() > 12 ? segments.size() - 12 : 0;
    out += "  chain (last " + std::to_string(segments.size() - first) + " of " +
           std::to_string(segments.size()) + " segments):\n";
    for (size_t k = first; k < segments.size(); ++k)
      out += format("    %10.3f - %10.3f us  %-10s %d events\n", segments[k].from / 1000,
                    segments[k].to / 1000, segments[k].track.c_str(), segments[k].events);
  }

  out += "\nwarnings:\n";
  const auto warnings = traceWarnings(model);
  if (warnings.empty()) out += "  none\n";
  for (const auto& w : warnings) out += "  - " + w + "\n";
  return out;
}

}  // namespace neuronsim::traces
