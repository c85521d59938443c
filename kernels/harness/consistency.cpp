// Interpreter versus timed model, bit for bit.
#include "kernels/harness/consistency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace neuronsim::kernels {

std::string firstBitDifference(const HostTensors& a, const HostTensors& b) {
  if (a.size() != b.size()) return "different output sets";
  for (const auto& [name, ta] : a) {
    auto it = b.find(name);
    if (it == b.end()) return fmt::format("output {} missing", name);
    const HostTensor& tb = it->second;
    if (ta.shape != tb.shape || ta.values.size() != tb.values.size())
      return fmt::format("{}: shapes differ", name);
    for (size_t i = 0; i < ta.values.size(); ++i)
      if (std::memcmp(&ta.values[i], &tb.values[i], sizeof(float)) != 0)
        return fmt::format("{}[{}]: {:f} vs {:f}", name, i, ta.values[i], tb.values[i]);
  }
  return "";
}

ConsistencyResult runBoth(const KernelSpec& spec, const ParamValues& params,
                          const HostTensors& inputs, const sim::MachineConfig& machine,
                          isa::Dtype dtype) {
  ConsistencyResult result;
  RunOptions options;
  options.dtype = dtype;
  options.mode = RunMode::Interpret;
  result.interpreted = runKernel(spec, params, inputs, machine, options);
  options.mode = RunMode::Timed;
  traces::EventLog log;
  options.sink = &log;
  result.timed = runKernel(spec, params, inputs, machine, options);
  result.difference = firstBitDifference(result.interpreted.outputs, result.timed.outputs);
  result.identical = result.difference.empty();
  result.races = result.timed.sim.races;
  std::map<int32_t, std::pair<int64_t, double>>
      last;  // queue -> (index, end) of the latest-issued so far
  std::vector<traces::DmaEvent> dmas = log.dmas;
  std::sort(dmas.begin(), dmas.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  for (const traces::DmaEvent& d : dmas) {
    auto it = last.find(d.queue);
    if (it != last.end() && d.end.ns() < it->second.second)
      result.queueOrderViolations.push_back(
          fmt::format("queue {}: instruction {} completed before instruction {}", d.queue, d.index,
                      it->second.first));
    if (it == last.end() || d.end.ns() >= it->second.second) last[d.queue] = {d.index, d.end.ns()};
  }
  return result;
}

}  // namespace neuronsim::kernels
