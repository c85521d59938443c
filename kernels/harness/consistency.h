#pragma once
// Runs a kernel on both the interpreter and the timed model and compares them bit for bit.

#include <string>
#include <vector>

#include "kernels/harness/run_kernel.h"

namespace neuronsim::kernels {

struct ConsistencyResult {
  KernelRun interpreted;
  KernelRun timed;
  bool identical = false;  ///< every output bit-identical
  std::string difference;  ///< the first differing element, when not identical
  std::vector<std::string> races;
  /// Transfers that completed before an earlier transfer of their queue (the builder's waits
  /// assume queues complete in order), one line each.
  std::vector<std::string> queueOrderViolations;
};

/// Interprets, then simulates with numerics, and compares the output bytes.
ConsistencyResult runBoth(const KernelSpec& spec, const ParamValues& params,
                          const HostTensors& inputs, const sim::MachineConfig& machine,
                          isa::Dtype dtype);

/// The first element where a and b differ in bits ("out[12]: 1.5 vs 1.25"), or "" when equal.
std::string firstBitDifference(const HostTensors& a, const HostTensors& b);

}  // namespace neuronsim::kernels
