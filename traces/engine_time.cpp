// Engine time split by what the head instruction was waiting for.
#include "traces/engine_time.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace neuronsim::traces {

std::vector<EngineTime> engineTimes(const TraceModel& model, double totalNs) {
  std::unordered_map<int64_t, const Span*> instructionOf, dmaOf;
  for (const Span& s : model.spans) (s.isDma ? dmaOf : instructionOf).emplace(s.index, &s);
  std::vector<EngineTime> out;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    EngineTime t;
    t.engine = std::string(isa::engineName(static_cast<isa::Engine>(e)));
    std::map<std::string, ProducerWait> producers;
    double lastEnd = 0;
    for (const Span& s : model.spans) {
      if (s.isDma || s.track != t.engine) continue;
      t.busyNs += s.endNs - s.startNs;
      lastEnd = std::max(lastEnd, s.endNs);
      if (s.stallNs <= 0) continue;
      if (s.stallCause != "semaphore") {
        t.internalNs += s.stallNs;
        continue;
      }
      const Span* from = nullptr;
      if (auto it = dmaOf.find(s.waitedOn); it != dmaOf.end())
        from = it->second;
      else if (auto it2 = instructionOf.find(s.waitedOn); it2 != instructionOf.end())
        from = it2->second;
      const double producerStart = !from ? s.readyNs : from->isDma ? from->readyNs : from->startNs;
      const double starved = std::clamp(producerStart - s.readyNs, 0.0, s.stallNs);
      t.starvedNs += starved;
      t.dependencyNs += s.stallNs - starved;
      if (s.stallNs - starved <= 0) continue;
      ProducerWait& p = producers[from ? from->track : std::string("?")];
      p.producer = from ? from->track : "?";
      ++p.count;
      p.ns += s.stallNs - starved;
      if (s.stallNs - starved > p.longestNs)
        p.longestNs = s.stallNs - starved, p.longestIndex = s.index;
    }
    t.doneNs = std::max(0.0, totalNs - lastEnd);
    for (auto& [name, p] : producers) t.producers.push_back(p);
    std::stable_sort(t.producers.begin(), t.producers.end(),
                     [](const ProducerWait& a, const ProducerWait& b) { return a.ns > b.ns; });
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace neuronsim::traces
