// neuronsim asm: parse, validate and run a text-assembly program on the timed model or the
// interpreter.
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/interpreter.h"
#include "isa/npy.h"
#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/harness/host_memory.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/run_outputs.h"
#include "kernels/harness/run_summary.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "tools/commands.h"
#include "tools/run_flags.h"
#include "traces/summary.h"

namespace neuronsim::tools {

namespace {

struct AsmFlags {
  std::vector<std::string> files;
  CommonRunFlags common;
};

/// --input NAME=FILE.npy of the program's input tensors, shapes checked from the .npy headers.
std::vector<std::pair<int32_t, std::string>> checkInputs(const isa::Program& program,
                                                         const std::vector<std::string>& specs,
                                                         bool inputsOptional) {
  std::vector<std::pair<int32_t, std::string>> inputs;
  std::set<int32_t> given;
  for (const std::string& spec : specs) {
    const auto [name, path] = kernels::splitAssignment(spec, "--input");
    const int32_t index = program.tensorIndex(name);
    if (index < 0)
      throw Error(fmt::format("asm: --input {}: the program declares no tensor '{}'", name, name));
    const isa::TensorDecl& decl = program.tensors[index];
    if (decl.kind != isa::TensorKind::Input)
      throw Error(fmt::format("asm: --input {}: tensor '{}' is not declared input", name, name));
    if (!given.insert(index).second) throw Error(fmt::format("asm: --input {}: given twice", name));
    const isa::NpyHeader header = isa::readNpyHeader(path);
    if (header.shape != decl.shape)
      throw Error(fmt::format("asm: --input {}: {} has shape {} but tensor '{}' is declared {}",
                              name, path, isa::shapeString(header.shape), name,
                              isa::shapeString(decl.shape)));
    inputs.emplace_back(index, path);
  }
  if (inputsOptional) return inputs;
  for (size_t i = 0; i < program.tensors.size(); ++i) {
    const isa::TensorDecl& decl = program.tensors[i];
    if (decl.kind == isa::TensorKind::Input && !given.count(static_cast<int32_t>(i)))
      throw Error(fmt::format(
          "asm: input tensor '{}' not given: --input {}=FILE.npy of shape {} (or --timing-only, "
          "which needs no values)",
          decl.name, decl.name, fmt::join(decl.shape, "x")));
  }
  return inputs;
}

/// `text` with each "instruction N" followed by " at FILE:LINE", N's line in the program file.
std::string withLines(const std::string& text, const std::string& file,
                      const std::vector<int64_t>& lines) {
  static constexpr std::string_view kWord = "instruction ";
  std::string out;
  size_t pos = 0;
  for (size_t hit = text.find(kWord); hit != std::string::npos; hit = text.find(kWord, pos)) {
    const size_t digits = hit + kWord.size();
    size_t end = digits;
    while (end < text.size() && end - digits < 18 &&
           std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    out.append(text, pos, end - pos);
    pos = end;
    if (end == digits) continue;
    const size_t index = std::stoull(text.substr(digits, end - digits));
    if (index < lines.size()) out += fmt::format(" at {}:{}", file, lines[index]);
  }
  return out.append(text, pos);
}

int runAsm(const CLI::App* app, const AsmFlags& flags) {
  checkExtras(app, "asm");
  if (flags.files.size() != 1)
    throw Error(fmt::format("asm: expected one FILE, got {} (try neuronsim asm --help)",
                            flags.files.size()));
  const std::string& file = flags.files[0];
  if (isPythonKernel(file.c_str()))
    throw Error(fmt::format(
        "asm: {} is a Python kernel, not assembly; run it with neuronsim run FILE.py:KERNEL",
        file));
  const CommonRunFlags& f = flags.common;
  const RunMode mode = f.mode("asm");
  const kernels::OutputRequest request = f.outputRequest("asm", mode);

  const sim::MachineConfig machine = sim::loadMachine(f.machineName(), f.sets);
  std::vector<int64_t> lines;
  const isa::Program program = isa::parseProgram(
      isa::readTextFile(file, isa::kMaxAssemblyBytes, "assembly file"), file, &lines);
  const auto located = [&](const std::string& text) { return withLines(text, file, lines); };
  try {
    isa::validateProgram(program, machine.geometry);
  } catch (const Error& e) {
    throw Error(located(e.what()));
  }
  kernels::checkHostMemory(fmt::format("asm {}", file),
                           kernels::programRunMemory(program, machine.geometry, mode));
  const auto inputs = checkInputs(program, f.inputs, mode == RunMode::TimingOnly);
  if (program.instructions.empty())
    throw Error(fmt::format("asm {}: no instructions (a program runs at least one)", file));

  std::vector<std::string> outputNames;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind == isa::TensorKind::Output) outputNames.push_back(t.name);
  isa::OutputSet outputs;
  kernels::declareOutputs(outputs, request,
                          mode == RunMode::TimingOnly ? std::vector<std::string>{} : outputNames);
  if (f.dryRun) return dryRunDone(fmt::format("asm {}", file));

  traces::EventLog log;
  sim::SimResult result;
  std::vector<isa::UninitializedRead> reads;
  kernels::HostTensors values;
  try {
    if (mode == RunMode::TimingOnly) {
      sim::SimOptions options;
      options.timingOnly = true;
      if (request.wantsEvents()) options.sink = &log;
      result = sim::simulate(program, machine, nullptr, options);
    } else {
      isa::MemoryState memory(program, machine.geometry);
      for (const auto& [index, path] : inputs) memory.setTensor(index, isa::readNpy(path).values);
      if (mode == RunMode::Interpret) {
        isa::interpret(program, memory);
      } else {
        sim::SimOptions options;
        if (request.wantsEvents()) options.sink = &log;
        result = sim::simulate(program, machine, &memory, options);
      }
      reads = memory.uninitializedReads();
      for (size_t i = 0; i < program.tensors.size(); ++i)
        if (program.tensors[i].kind == isa::TensorKind::Output)
          values[program.tensors[i].name] = {program.tensors[i].shape,
                                             memory.getTensor(static_cast<int32_t>(i))};
    }
  } catch (const Error& e) {
    throw Error(located(e.what()));
  }

  kernels::reportDiagnostics(fmt::format("asm {}", file), program, result.races, reads, f.strict,
                             located);
  nlohmann::json summary;
  if (mode == RunMode::Interpret) {
    std::printf("%s: interpreted %zu instructions\n", file.c_str(), program.instructions.size());
  } else {
    summary = kernels::runSummary(kernels::programRunInfo(program, machine, file), result, 0);
    std::fputs(traces::summaryText(summary).c_str(), stdout);
  }

  kernels::RunProducts products;
  products.program = &program;
  products.log = &log;
  products.uninitializedReads = &reads;
  products.summary = &summary;
  products.outputs = &values;
  products.machine = &machine;
  kernels::writeOutputs(outputs, request, products);
  return 0;
}

}  // namespace

Command addAsmCommand(CLI::App& app) {
  CLI::App* sub = addSubcommand(app, "asm", "simulate a hand-written or dumped program");
  sub->footer(
      "Parses a text-assembly program (syntax: docs/assembly.md), validates it against the\n"
      "machine and runs it on the timed model (default) or the sequential interpreter. Every\n"
      "input tensor must be given with --input (except with --timing-only).");
  auto flags = std::make_shared<AsmFlags>();
  addPositionals(sub, "FILE", flags->files, "the program (.nsasm)");
  flags->common.add(sub, CommonRunFlags::Command::Asm);
  return {sub, [sub, flags] { return runAsm(sub, *flags); }};
}

}  // namespace neuronsim::tools
