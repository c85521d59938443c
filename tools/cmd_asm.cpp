// neuronsim asm: parse, validate and run a text-assembly program on the timed model or the
// interpreter.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/interpreter.h"
#include "isa/memory_state.h"
#include "isa/npy.h"
#include "isa/validation.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/trace_machine.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "traces/chrome_trace.h"
#include "traces/event.h"
#include "traces/summary.h"

namespace neuronsim::tools {

namespace {

constexpr const char* kUsage =
    "usage: neuronsim asm FILE [options]\n"
    "\n"
    "Parses a text-assembly program (syntax: docs/assembly.md), validates it against the\n"
    "machine and runs it on the timed model (default) or the sequential interpreter.\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy   an input tensor (repeatable; every input tensor is required)\n"
    "  --output-dir DIR        write each output tensor as DIR/NAME.npy (float32)\n"
    "  --interpret             run on the sequential interpreter instead of the timed model\n"
    "  --machine M             trn2 (default), trn1 or a machine FILE.json\n"
    "  --set KEY=VALUE         override one machine parameter (repeatable)\n"
    "  --timing-only           timed model without numerics (inputs optional, no outputs)\n"
    "  --trace FILE.json       Chrome/Perfetto trace of the timed run, summary embedded\n"
    "  --summary-json FILE     the timed run's summary as JSON\n"
    "  --help                  this text\n";

/// Uninitialized reads printed before the rest are summarised in one line.
constexpr size_t kMaxUninitializedWarnings = 20;

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("asm: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  out += "]";
  return out;
}

/// Reads every --input NAME=FILE.npy into `memory`; each input tensor must be given unless
/// `inputsOptional`.
void loadInputs(const isa::Program& program, const std::vector<std::string>& specs,
                bool inputsOptional, isa::MemoryState& memory) {
  std::set<int32_t> given;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("asm: --input '" + spec + "': expected NAME=FILE.npy");
    const std::string name = spec.substr(0, eq);
    const std::string path = spec.substr(eq + 1);
    const int32_t index = program.tensorIndex(name);
    if (index < 0)
      throw Error("asm: --input " + name + ": the program declares no tensor '" + name + "'");
    const isa::TensorDecl& decl = program.tensors[index];
    if (decl.kind != isa::TensorKind::Input)
      throw Error("asm: --input " + name + ": tensor '" + name + "' is not declared input");
    if (!given.insert(index).second) throw Error("asm: --input " + name + ": given twice");
    isa::NpyArray array = isa::readNpy(path);
    if (array.shape != decl.shape)
      throw Error("asm: --input " + name + ": " + path + " has shape " + shapeText(array.shape) +
                  " but tensor '" + name + "' is declared " + shapeText(decl.shape));
    memory.setTensor(index, array.values);
  }
  if (inputsOptional) return;
  for (size_t i = 0; i < program.tensors.size(); ++i) {
    const isa::TensorDecl& decl = program.tensors[i];
    if (decl.kind == isa::TensorKind::Input && !given.count(static_cast<int32_t>(i)))
      throw Error("asm: input tensor '" + decl.name + "' not given (--input " + decl.name +
                  "=FILE.npy)");
  }
}

void warnUninitialized(const isa::Program& program, isa::MemoryState& memory) {
  const auto& reads = memory.uninitializedReads();
  for (size_t i = 0; i < reads.size() && i < kMaxUninitializedWarnings; ++i) {
    const isa::UninitializedRead& r = reads[i];
    const bool known =
        r.instruction >= 0 && r.instruction < static_cast<int64_t>(program.instructions.size());
    const std::string opcode(known ? isa::opcodeName(program.instructions[r.instruction].opcode)
                                   : "?");
    std::fprintf(stderr, "warning: instruction %lld (%s) reads uninitialized memory in %s\n",
                 static_cast<long long>(r.instruction), opcode.c_str(), r.operand.c_str());
  }
  if (reads.size() > kMaxUninitializedWarnings)
    std::fprintf(stderr, "warning: ... and %zu more uninitialized reads\n",
                 reads.size() - kMaxUninitializedWarnings);
}

void printTotals(const std::string& file, const std::string& machine,
                 const sim::SimResult& result) {
  const traces::RunTotals& t = result.totals;
  std::printf("%s on %s: %.1f ns, %lld instructions\n", file.c_str(), machine.c_str(), t.totalNs,
              static_cast<long long>(t.instructions));
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const traces::EngineTotals& engine = t.engines[e];
    const double percent = t.totalNs > 0 ? 100.0 * engine.busyNs / t.totalNs : 0.0;
    std::printf("  %-7s busy %12.1f ns %6.1f%%  %lld instructions\n",
                std::string(isa::engineName(static_cast<isa::Engine>(e))).c_str(), engine.busyNs,
                percent, static_cast<long long>(engine.instructions));
  }
  std::printf("  dma     %lld transfers, %lld bytes, active %.1f ns\n",
              static_cast<long long>(t.dmaTransfers), static_cast<long long>(t.dmaBytes),
              t.dmaActiveNs);
  for (const std::string& race : result.races) {
    const bool prefixed = race.rfind("race: ", 0) == 0;
    std::fprintf(stderr, "warning: %s%s\n", prefixed ? "" : "race: ", race.c_str());
  }
}

/// What the summary needs beyond the totals. A program has no single dtype: the peak is the
/// bf16 one, and the least HBM traffic is reading every input and writing every output once.
traces::RunInfo runInfo(const isa::Program& program, const sim::MachineConfig& machine,
                        const std::string& file) {
  traces::RunInfo info;
  info.kernel = file;
  info.machine = machine.name;
  info.dtype = "mixed";
  info.peakFlopsPerNs = machine.peakBf16Flops() / 1e9;
  info.hbmBytesPerNs = machine.hbmGBps;
  for (const isa::TensorDecl& t : program.tensors)
    if (t.kind != isa::TensorKind::Internal)
      info.minHbmBytes += t.numElements() * isa::dtypeBytes(t.dtype);
  return info;
}

/// Collects every output first, then writes DIR/NAME.npy for each.
void writeOutputs(const isa::Program& program, const isa::MemoryState& memory,
                  const std::string& dir) {
  std::vector<std::pair<std::string, isa::NpyArray>> outputs;
  for (size_t i = 0; i < program.tensors.size(); ++i) {
    const isa::TensorDecl& decl = program.tensors[i];
    if (decl.kind != isa::TensorKind::Output) continue;
    outputs.emplace_back(decl.name,
                         isa::NpyArray{decl.shape, memory.getTensor(static_cast<int32_t>(i))});
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("asm: --output-dir " + dir + ": " + ec.message());
  for (const auto& [name, array] : outputs) {
    const std::string path = (std::filesystem::path(dir) / (name + ".npy")).string();
    isa::writeNpy(path, array);
    std::printf("wrote %s\n", path.c_str());
  }
}

}  // namespace

int asmCommand(int argc, char** argv) {
  const Args args(argc, argv, 2, {"interpret", "timing-only", "help"});
  if (args.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  args.allowOnly("asm", {"input", "output-dir", "interpret", "machine", "set", "timing-only",
                         "trace", "summary-json", "help"});
  if (args.positional().size() != 1)
    throw Error("asm: expected one FILE, got " + std::to_string(args.positional().size()) +
                " (try neuronsim asm --help)");
  const std::string file = args.positional()[0];
  const bool interpretOnly = args.flag("interpret");
  const bool timingOnly = args.flag("timing-only");
  const std::optional<std::string> outputDir = args.get("output-dir");
  if (timingOnly && interpretOnly)
    throw Error("asm: --timing-only needs the timed model; drop --interpret");
  if (interpretOnly && (args.has("trace") || args.has("summary-json")))
    throw Error("asm: --interpret measures no time; drop --trace and --summary-json");
  if (timingOnly && outputDir)
    throw Error("asm: --timing-only computes no outputs; drop --output-dir");
  if (outputDir && std::filesystem::exists(*outputDir) &&
      !std::filesystem::is_directory(*outputDir))
    throw Error("asm: --output-dir " + *outputDir + " is not a directory");

  const sim::MachineConfig machine =
      sim::loadMachine(args.get("machine").value_or("trn2"), args.all("set"));
  const isa::Program program = isa::parseProgram(readText(file), file);
  isa::validateProgram(program, machine.geometry);

  isa::MemoryState memory(program, machine.geometry);
  loadInputs(program, args.all("input"), timingOnly, memory);

  traces::EventLog log;
  nlohmann::json summary;
  if (interpretOnly) {
    isa::interpret(program, memory);
    std::printf("%s: interpreted %zu instructions\n", file.c_str(), program.instructions.size());
  } else {
    sim::SimOptions options;
    options.timingOnly = timingOnly;
    if (args.has("trace")) options.sink = &log;
    const sim::SimResult result =
        sim::simulate(program, machine, timingOnly ? nullptr : &memory, options);
    printTotals(file, machine.name, result);
    summary = traces::summaryJson(runInfo(program, machine, file), result.totals);
  }
  warnUninitialized(program, memory);
  if (auto path = args.get("summary-json"))
    kernels::writeFileAtomically(*path, summary.dump(2) + "\n");
  if (auto path = args.get("trace"))
    traces::writeChromeTrace(*path, program, log, summary, kernels::traceMachine(machine));
  if (outputDir) writeOutputs(program, memory, *outputDir);
  return 0;
}

}  // namespace neuronsim::tools
