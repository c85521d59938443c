// Rebuilds each semaphore's increments from signal times and finds the one releasing each wait.
#include "traces/semaphore_releases.h"

#include <algorithm>

namespace neuronsim::traces {

namespace {

/// One increment of a semaphore.
struct Increment {
  double ns;
  int64_t delta;
  int64_t by;
  int64_t cumulative = 0;  ///< the count after this increment
};

const isa::Instruction* instructionAt(const isa::Program& program, int64_t index) {
  return index >= 0 && static_cast<size_t>(index) < program.instructions.size()
             ? &program.instructions[static_cast<size_t>(index)]
             : nullptr;
}

void addSignals(std::vector<std::vector<Increment>>& bySem, const isa::Instruction& inst,
                int64_t index, double readNs, double completeNs) {
  for (const isa::SemSignal& s : inst.signals) {
    if (s.sem < 0 || static_cast<size_t>(s.sem) >= bySem.size()) continue;
    bySem[static_cast<size_t>(s.sem)].push_back(
        {s.at == isa::SignalAt::Read ? readNs : completeNs, s.delta, index, 0});
  }
}

/// Sorts by landing time and fills the running count; true when every delta is positive.
bool settle(std::vector<Increment>& increments) {
  std::stable_sort(increments.begin(), increments.end(),
                   [](const Increment& a, const Increment& b) { return a.ns < b.ns; });
  int64_t count = 0;
  bool monotone = true;
  for (Increment& inc : increments) {
    monotone = monotone && inc.delta > 0;
    inc.cumulative = count += inc.delta;
  }
  return monotone;
}

Release releaseOf(const std::vector<Increment>& increments, bool monotone,
                  const isa::SemWait& wait) {
  if (wait.value <= 0) return {};
  if (monotone) {
    auto it = std::lower_bound(increments.begin(), increments.end(), wait.value,
                               [](const Increment& inc, int64_t v) { return inc.cumulative < v; });
    return it == increments.end() ? Release{} : Release{it->by, it->ns};
  }
  for (const Increment& inc : increments)
    if (inc.cumulative >= wait.value) return {inc.by, inc.ns};
  return {};
}

}  // namespace

std::vector<std::vector<Release>> semaphoreReleases(const isa::Program& program,
                                                    const EventLog& log,
                                                    const MachineFacts& machine) {
  size_t semaphores = program.semaphores.size();
  for (const isa::Instruction& inst : program.instructions) {
    for (const auto& s : inst.signals)
      semaphores = std::max(semaphores, static_cast<size_t>(s.sem + 1));
    for (const auto& w : inst.waits)
      semaphores = std::max(semaphores, static_cast<size_t>(w.sem + 1));
  }
  std::vector<std::vector<Increment>> bySem(semaphores);
  for (const InstructionEvent& e : log.instructions) {
    const isa::Instruction* inst = instructionAt(program, e.index);
    if (!inst || isa::isDma(inst->opcode)) continue;
    const Tick handoff = Tick::fromNs(machine.semaphoreHandoffNs);
    const Tick latency = Tick::fromNs(machine.pipelineLatencyNs[static_cast<size_t>(e.engine)]);
    addSignals(bySem, *inst, e.index, (e.start + handoff).ns(), (e.end + latency + handoff).ns());
  }
  for (const DmaEvent& d : log.dmas)
    if (const isa::Instruction* inst = instructionAt(program, d.index))
      addSignals(bySem, *inst, d.index, d.start.ns(), d.end.ns());
  std::vector<char> monotone(bySem.size());
  for (size_t s = 0; s < bySem.size(); ++s) monotone[s] = settle(bySem[s]);

  std::vector<std::vector<Release>> releases(log.instructions.size());
  for (size_t i = 0; i < log.instructions.size(); ++i) {
    const isa::Instruction* inst = instructionAt(program, log.instructions[i].index);
    if (!inst) continue;
    for (const isa::SemWait& w : inst->waits)
      releases[i].push_back(w.sem >= 0 && static_cast<size_t>(w.sem) < bySem.size()
                                ? releaseOf(bySem[static_cast<size_t>(w.sem)],
                                            monotone[static_cast<size_t>(w.sem)], w)
                                : Release{});
  }
  return releases;
}

}  // namespace neuronsim::traces
