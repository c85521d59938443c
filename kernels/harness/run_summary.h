#pragma once
// What `run` and `asm` report after a run: the summary JSON and the warnings (or, strict, one
// error).

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "isa/memory_state.h"
#include "isa/program.h"
#include "kernels/harness/run_kernel.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "traces/summary.h"

namespace neuronsim::kernels {

/// RunInfo of a kernel run: the peak at its dtype, the least HBM traffic of its shapes and
/// parameters, and the flops it must compute (spec.flops; without it the roofline uses the
/// executed flops).
traces::RunInfo kernelRunInfo(const KernelSpec& spec, const KernelShapes& shapes, isa::Dtype dtype,
                              const sim::MachineConfig& machine, const ParamValues& params);
/// RunInfo of an assembly program, named `name`. A program has no single dtype ("mixed"): the
/// peak is the bf16 one, and the least HBM traffic is every input and output moved once.
traces::RunInfo programRunInfo(const isa::Program& program, const sim::MachineConfig& machine,
                               const std::string& name);
/// traces::summaryJson of a timed run; host_seconds falls back to `runSeconds` (s) when the
/// simulator did not measure it.
nlohmann::json runSummary(const traces::RunInfo& info, const sim::SimResult& result,
                          double runSeconds);

/// "output 'NAME' is never written (no instruction stores to it)" for each output tensor that
/// no instruction's destination names: a kernel that forgot its store.
std::vector<std::string> unwrittenOutputs(const isa::Program& program);

/// Prints each output no instruction writes (unwrittenOutputs), each race and each read of
/// never-written memory (the first 20, then a count) as one
/// "warning: ..." line on stderr. With `strict` nothing is printed and, if there is any, one
/// neuronsim::Error: "<who>: --strict: output ..." for an unwritten output, else "<who>: --strict:
/// N races and M reads of never-written memory (first: ...)".
/// `locate`, when set, rewrites each line (asm adds the file lines of the instructions named).
void reportDiagnostics(const std::string& who, const isa::Program& program,
                       const std::vector<std::string>& races,
                       const std::vector<isa::UninitializedRead>& reads, bool strict,
                       const std::function<std::string(const std::string&)>& locate = {});

}  // namespace neuronsim::kernels
