// Per-phase totals from instruction notes.
#include "traces/phases.h"

#include <algorithm>
#include <map>

namespace neuronsim::traces {

std::vector<PhaseTime> phaseTimes(const TraceModel& model, const CriticalPath& path) {
  const bool any = std::any_of(model.spans.begin(), model.spans.end(),
                               [](const Span& s) { return !s.note.empty(); });
  if (!any) return {};
  std::map<std::string, PhaseTime> phases;
  auto phaseOf = [&](const Span& s) -> PhaseTime& {
    const std::string name = s.note.empty() ? "(no note)" : s.note;
    auto [it, added] = phases.try_emplace(name);
    if (added) {
      it->second.name = name;
      it->second.firstStartNs = s.startNs;
      it->second.lastEndNs = s.endNs;
    }
    return it->second;
  };
  for (const Span& s : model.spans) {
    PhaseTime& p = phaseOf(s);
    ++(s.isDma ? p.transfers : p.instructions);
    p.firstStartNs = std::min(p.firstStartNs, s.startNs);
    p.lastEndNs = std::max(p.lastEndNs, s.endNs);
    p.busyNs[static_cast<size_t>(spanResource(s))] += s.endNs - s.startNs;
  }
  for (const PathPiece& piece : path.pieces)
    phaseOf(model.spans[piece.span]).criticalNs += piece.toNs - piece.fromNs;
  std::vector<PhaseTime> out;
  for (auto& [name, p] : phases) out.push_back(p);
  std::stable_sort(out.begin(), out.end(), [](const PhaseTime& a, const PhaseTime& b) {
    return a.firstStartNs < b.firstStartNs;
  });
  return out;
}

}  // namespace neuronsim::traces
