// Summary assembly and race / uninitialized-read reporting shared by run and asm.
#include "kernels/harness/run_summary.h"

#include <fmt/format.h>

#include <cstdio>

#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

namespace {

/// Reads listed one per line before the rest are counted.
constexpr size_t kMaxReadWarnings = 20;

std::string raceText(const std::string& race) {
  return race.rfind("race: ", 0) == 0 ? race : fmt::format("race: {}", race);
}

std::string readText(const isa::Program& program, const isa::UninitializedRead& read) {
  const bool known =
      read.instruction >= 0 && read.instruction < static_cast<int64_t>(program.instructions.size());
  return fmt::format("instruction {} ({}) reads uninitialized memory in {}", read.instruction,
                     known ? isa::opcodeName(program.instructions[read.instruction].opcode) : "?",
                     read.operand);
}

}  // namespace

traces::RunInfo kernelRunInfo(const KernelSpec& spec, const KernelShapes& shapes, isa::Dtype dtype,
                              const sim::MachineConfig& machine, const ParamValues& params) {
  traces::RunInfo info;
  info.kernel = spec.name;
  info.machine = machine.name;
  info.dtype = std::string(isa::dtypeName(dtype));
  info.peakFlopsPerNs = machine.peakBf16Flops() / 1e9 /
                        (dtype == isa::Dtype::Fp32 ? machine.geometry.fp32MatmulFactor : 1.0);
  info.hbmBytesPerNs = machine.hbmGBps;
  info.minHbmBytes = minimumHbmBytes(spec, shapes, dtype, params);
  if (spec.flops) info.mustFlops = spec.flops(shapes.inputs, params);
  return info;
}

traces::RunInfo programRunInfo(const isa::Program& program, const sim::MachineConfig& machine,
                               const std::string& name) {
  traces::RunInfo info;
  info.kernel = name;
  info.machine = machine.name;
  info.dtype = "mixed";
  info.peakFlopsPerNs = machine.peakBf16Flops() / 1e9;
  info.hbmBytesPerNs = machine.hbmGBps;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind != isa::TensorKind::Internal)
      info.minHbmBytes += isa::checkedElements(t.shape, fmt::format("tensor '{}'", t.name), true) *
                          isa::dtypeBytes(t.dtype);
  return info;
}

nlohmann::json runSummary(const traces::RunInfo& info, const sim::SimResult& result,
                          double runSeconds) {
  traces::RunTotals totals = result.totals;
  if (totals.hostSeconds <= 0) totals.hostSeconds = runSeconds;
  return traces::summaryJson(info, totals);
}

std::vector<std::string> unwrittenOutputs(const isa::Program& program) {
  std::vector<bool> written(program.tensors.size(), false);
  for (const isa::Instruction& inst : program.instructions)
    if (inst.dst.space == isa::Space::Hbm && inst.dst.tensor >= 0 &&
        inst.dst.tensor < static_cast<int32_t>(written.size()))
      written[static_cast<size_t>(inst.dst.tensor)] = true;
  std::vector<std::string> lines;
  for (size_t i = 0; i < program.tensors.size(); ++i)
    if (program.tensors[i].kind == isa::TensorKind::Output && !written[i])
      lines.push_back(fmt::format("output '{}' is never written (no instruction stores to it)",
                                  program.tensors[i].name));
  return lines;
}

void reportDiagnostics(const std::string& who, const isa::Program& program,
                       const std::vector<std::string>& races,
                       const std::vector<isa::UninitializedRead>& reads, bool strict,
                       const std::function<std::string(const std::string&)>& locate) {
  const auto located = [&](const std::string& line) { return locate ? locate(line) : line; };
  const std::vector<std::string> unwritten = unwrittenOutputs(program);
  if (strict && !unwritten.empty()) throw Error(fmt::format("{}: --strict: {}", who, unwritten[0]));
  if (!strict)
    for (const std::string& line : unwritten) std::fprintf(stderr, "warning: %s\n", line.c_str());
  if (strict) {
    if (races.empty() && reads.empty()) return;
    const std::string first = races.empty() ? readText(program, reads[0]) : raceText(races[0]);
    throw Error(
        fmt::format("{}: --strict: {} race{} and {} read{} of never-written memory (first: {})",
                    who, races.size(), races.size() == 1 ? "" : "s", reads.size(),
                    reads.size() == 1 ? "" : "s", located(first)));
  }
  for (const std::string& race : races)
    std::fprintf(stderr, "warning: %s\n", located(raceText(race)).c_str());
  for (size_t i = 0; i < reads.size() && i < kMaxReadWarnings; ++i)
    std::fprintf(stderr, "warning: %s\n", located(readText(program, reads[i])).c_str());
  if (reads.size() > kMaxReadWarnings)
    std::fprintf(stderr, "warning: ... and %zu more uninitialized reads\n",
                 reads.size() - kMaxReadWarnings);
}

}  // namespace neuronsim::kernels
