// Interpreter versus timed model, bit for bit.
#include "kernels/harness/consistency.h"

#include <cstring>

#include "isa/error.h"

namespace neuronsim::kernels {

std::string firstBitDifference(const HostTensors& a, const HostTensors& b) {
  if (a.size() != b.size()) return "different output sets";
  for (const auto& [name, ta] : a) {
    auto it = b.find(name);
    if (it == b.end()) return "output " + name + " missing";
    const HostTensor& tb = it->second;
    if (ta.shape != tb.shape || ta.values.size() != tb.values.size()) return name + ": shapes differ";
    for (size_t i = 0; i < ta.values.size(); ++i)
      if (std::memcmp(&ta.values[i], &tb.values[i], sizeof(float)) != 0)
        return name + "[" + std::to_string(i) + "]: " + std::to_string(ta.values[i]) + " vs " + std::to_string(tb.values[i]);
  }
  return "";
}

ConsistencyResult runBoth(const KernelSpec& spec, const ParamValues& params, const HostTensors& inputs,
                          const sim::MachineConfig& machine, isa::Dtype dtype) {
  ConsistencyResult result;
  RunOptions options;
  options.dtype = dtype;
  options.mode = RunMode::Interpret;
  result.interpreted = runKernel(spec, params, inputs, machine, options);
  options.mode = RunMode::Timed;
  try {
    result.timed = runKernel(spec, params, inputs, machine, options);
    result.timedRan = true;
  } catch (const Error& e) {
    if (std::string(e.what()).find("not built yet") == std::string::npos) throw;
  }
  if (!result.timedRan) {
    result.identical = true;
    return result;
  }
  result.difference = firstBitDifference(result.interpreted.outputs, result.timed.outputs);
  result.identical = result.difference.empty();
  result.races = result.timed.sim.races;
  return result;
}

}  // namespace neuronsim::kernels
