// neuronsim run KERNEL: build a registered kernel's program for given or generated inputs,
// simulate it and print its summary (DESIGN.md section 4).
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/npy.h"
#include "kernels/harness/occupancy.h"
#include "kernels/harness/progress.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/trace_machine.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "traces/chrome_trace.h"
#include "traces/csv.h"
#include "traces/summary.h"

namespace neuronsim::tools {

namespace {

namespace fs = std::filesystem;
using kernels::HostTensors;
using kernels::KernelSpec;

constexpr const char* kUsage =
    "usage: neuronsim run KERNEL [options] [kernel parameters]\n"
    "\n"
    "Builds KERNEL's program (neuronsim list shows the kernels), simulates it and prints a "
    "summary.\n"
    "Inputs not given are generated from a seeded normal distribution with their default shape.\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy   an input (float32/float64/float16, C order; repeatable)\n"
    "  --shape NAME=AxBxC      shape of a generated input (repeatable)\n"
    "  --seed N                seed of generated inputs (default 0)\n"
    "  --dtype fp32|bf16       kernel dtype (default fp32)\n"
    "  --output-dir DIR        write each output as DIR/NAME.npy (float32)\n"
    "  --trace FILE.json       Chrome/Perfetto trace with the summary embedded\n"
    "  --summary-json FILE     the summary as JSON\n"
    "  --csv FILE              the instruction table (start, end, engine, opcode, stall, ...) as "
    "CSV\n"
    "  --dump-asm FILE         the program as text assembly\n"
    "  --machine M             trn2 (default), trn1 or a machine FILE.json\n"
    "  --set KEY=VALUE         override one machine parameter (repeatable)\n"
    "  --timing-only           simulate without numerics (no outputs)\n"
    "  --interpret             run the sequential interpreter only (no time)\n"
    "  --check                 compare with the C++ reference; exit 1 above the tolerance\n"
    "                          (normalized error 1e-4 fp32, 2e-2 bf16)\n"
    "  --help                  this text, or with KERNEL its tensors and parameters\n";

const std::set<std::string> kCommonOptions = {
    "input",    "shape",   "seed", "dtype",       "output-dir", "trace", "csv", "summary-json",
    "dump-asm", "machine", "set",  "timing-only", "interpret",  "check", "help"};

std::set<std::string> booleanFlags() {
  std::set<std::string> flags = {"timing-only", "interpret", "check", "help"};
  for (const KernelSpec& spec : kernels::kernelRegistry())
    for (const kernels::ParamSpec& p : spec.params)
      if (p.type == kernels::ParamType::Bool) flags.insert(kernels::flagName(p.name));
  return flags;
}

void printKernelHelp(const KernelSpec& spec) {
  std::printf("neuronsim run %s: %s\n\ninputs:\n", spec.name.c_str(), spec.description.c_str());
  for (const auto& t : spec.inputs) {
    auto shape = spec.defaultShapes.find(t.name);
    std::printf("  %-16s %s%s%s\n", t.name.c_str(), t.meaning.c_str(),
                t.optional ? " (optional)" : "",
                shape == spec.defaultShapes.end()
                    ? ""
                    : (", default shape " + kernels::shapeText(shape->second)).c_str());
  }
  std::printf("outputs:\n");
  for (const auto& t : spec.outputs) std::printf("  %-16s %s\n", t.name.c_str(), t.meaning.c_str());
  std::printf("parameters:\n");
  if (spec.params.empty()) std::printf("  (none)\n");
  for (const auto& p : spec.params) {
    std::string type(kernels::paramTypeName(p.type));
    if (p.type == kernels::ParamType::Enum) {
      type.clear();
      for (const auto& c : p.choices) type += (type.empty() ? "" : "|") + c;
    }
    std::printf("  --%-22s %s (%s, default %s)\n", kernels::flagName(p.name).c_str(),
                p.meaning.c_str(), type.c_str(),
                p.defaultValue.empty() ? "unset" : p.defaultValue.c_str());
  }
  std::printf("\n");
  std::fputs(kUsage, stdout);
}

isa::Dtype parseDtype(const std::string& text) {
  if (text == "fp32") return isa::Dtype::Fp32;
  if (text == "bf16") return isa::Dtype::Bf16;
  throw Error("run: --dtype takes fp32 or bf16, not '" + text + "'");
}

uint64_t parseSeed(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error("run: --seed takes a non-negative integer, not '" + text + "'");
  return std::stoull(text);
}

/// Output files must be writable where asked; checked before anything runs.
void checkWritable(const std::string& option, const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw Error("run: " + option + " " + path + ": directory '" + parent.string() +
                "' does not exist");
  if (fs::is_directory(path)) throw Error("run: " + option + " " + path + " is a directory");
}

/// Inputs from --input files and --shape/default shapes (generated), in the kernel dtype.
HostTensors collectInputs(const KernelSpec& spec, const Args& args, uint64_t seed, isa::Dtype dtype,
                          const kernels::ParamValues& params) {
  HostTensors given;
  for (const std::string& text : args.all("input")) {
    const auto [name, path] = kernels::splitAssignment(text, "--input");
    if (given.count(name)) throw Error("run: --input " + name + " given twice");
    isa::NpyArray array = isa::readNpy(path);
    given[name] = kernels::HostTensor{array.shape, std::move(array.values)};
  }
  kernels::ShapeMap shapes;
  for (const std::string& text : args.all("shape")) {
    const auto [name, shapeText] = kernels::splitAssignment(text, "--shape");
    if (given.count(name)) throw Error("run: " + name + " has both --input and --shape");
    if (shapes.count(name)) throw Error("run: --shape " + name + " given twice");
    shapes[name] = kernels::parseShape(shapeText, "run: --shape " + name);
  }
  for (const auto& [name, unused] : shapes) {
    bool known = false;
    for (const auto& t : spec.inputs) known = known || t.name == name;
    if (!known) throw Error("run: " + spec.name + " has no input named '" + name + "'");
  }
  kernels::ShapeMap known = shapes;
  for (const auto& [name, tensor] : given) known[name] = tensor.shape;
  if (spec.deriveShapes)
    for (const auto& [name, shape] : spec.deriveShapes(known, params))
      if (!known.count(name)) shapes.emplace(name, shape);
  if (given.empty())
    for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
  HostTensors inputs = kernels::generateInputs(spec, shapes, seed);
  for (auto& [name, tensor] : given) inputs[name] = std::move(tensor);
  inputs = kernels::roundedTo(inputs, dtype);
  if (spec.completeInputs) {
    std::set<std::string> generated;
    for (const auto& [name, shape] : shapes) generated.insert(name);
    spec.completeInputs(inputs, generated, params);
  }
  return inputs;
}

void writeOutputs(const HostTensors& outputs, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("run: --output-dir " + dir + ": " + ec.message());
  for (const auto& [name, tensor] : outputs) {
    const std::string path = (fs::path(dir) / (name + ".npy")).string();
    isa::writeNpy(path, isa::NpyArray{tensor.shape, tensor.values});
    std::printf("wrote %s\n", path.c_str());
  }
}

}  // namespace

int runCommand(int argc, char** argv) {
  if (argc > 2 && isPythonKernel(argv[2])) return runPythonKernel(argc, argv);
  const Args args(argc, argv, 2, booleanFlags());
  if (args.positional().empty()) {
    if (args.flag("help")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    throw Error("run: expected a KERNEL (neuronsim list shows them)");
  }
  if (args.positional().size() > 1)
    throw Error("run: unexpected argument '" + args.positional()[1] + "'");
  const KernelSpec& spec = kernels::findKernel(args.positional()[0]);
  if (args.flag("help")) {
    printKernelHelp(spec);
    return 0;
  }
  std::set<std::string> known = kCommonOptions;
  for (const auto& p : spec.params) known.insert(kernels::flagName(p.name));
  args.allowOnly("run " + spec.name, known);

  const isa::Dtype dtype = parseDtype(args.get("dtype").value_or("fp32"));
  const uint64_t seed = parseSeed(args.get("seed").value_or("0"));
  const bool timingOnly = args.flag("timing-only");
  const bool interpretOnly = args.flag("interpret");
  const bool check = args.flag("check");
  const auto outputDir = args.get("output-dir");
  if (timingOnly && interpretOnly)
    throw Error("run: --timing-only and --interpret exclude each other");
  if (timingOnly && check) throw Error("run: --timing-only computes no outputs to --check");
  if (timingOnly && outputDir)
    throw Error("run: --timing-only computes no outputs; drop --output-dir");
  if (interpretOnly && (args.has("trace") || args.has("summary-json") || args.has("csv")))
    throw Error("run: --interpret measures no time; drop --trace, --csv and --summary-json");
  if (outputDir && fs::exists(*outputDir) && !fs::is_directory(*outputDir))
    throw Error("run: --output-dir " + *outputDir + " is not a directory");
  for (const char* option : {"trace", "csv", "summary-json", "dump-asm"})
    if (auto path = args.get(option)) checkWritable(std::string("--") + option, *path);

  std::vector<std::pair<std::string, std::string>> paramTexts;
  for (const auto& p : spec.params)
    if (auto value = args.get(kernels::flagName(p.name))) paramTexts.emplace_back(p.name, *value);
  const kernels::ParamValues params = kernels::parseParams(spec, paramTexts);
  const sim::MachineConfig machine =
      sim::loadMachine(args.get("machine").value_or("trn2"), args.all("set"));
  const HostTensors inputs = collectInputs(spec, args, seed, dtype, params);

  traces::EventLog log;
  kernels::RunOptions options;
  options.dtype = dtype;
  options.mode = interpretOnly
                     ? kernels::RunMode::Interpret
                     : (timingOnly ? kernels::RunMode::TimingOnly : kernels::RunMode::Timed);
  if (args.has("trace") || args.has("csv")) options.sink = &log;
  kernels::ProgressMonitor progress(stderr);
  options.phase = [&](const std::string& name) { progress.phase(name); };
  const kernels::KernelRun run = kernels::runKernel(spec, params, inputs, machine, options);
  progress.done();

  double error = 0;
  if (check) {
    if (spec.reference == nullptr)
      throw Error("run: " + spec.name + " has no reference to --check against");
    error = kernels::maxNormalizedError(run.outputs, spec.reference(inputs, params));
  }

  nlohmann::json summary;
  if (!interpretOnly) {
    traces::RunInfo info;
    info.kernel = spec.name;
    info.machine = machine.name;
    info.dtype = std::string(isa::dtypeName(dtype));
    info.peakFlopsPerNs = machine.peakBf16Flops() / 1e9 /
                          (dtype == isa::Dtype::Fp32 ? machine.fp32MatmulFactor : 1.0);
    info.hbmBytesPerNs = machine.hbmGBps;
    info.minHbmBytes = kernels::minimumHbmBytes(spec, run.shapes, dtype);
    traces::RunTotals totals = run.sim.totals;
    if (totals.hostSeconds <= 0) totals.hostSeconds = run.runSeconds;
    summary = traces::summaryJson(info, totals);
    summary["build_seconds"] = run.buildSeconds;
    summary["seed"] = seed;
    if (check) summary["check_error"] = error;
    std::fputs(traces::summaryText(summary).c_str(), stdout);
  } else {
    std::printf("%s: interpreted %zu instructions in %.3f s (build %.3f s)\n", spec.name.c_str(),
                run.program.instructions.size(), run.runSeconds, run.buildSeconds);
  }
  for (const std::string& race : run.sim.races) std::fprintf(stderr, "warning: %s\n", race.c_str());
  for (const auto& read : run.uninitializedReads)
    log.uninitializedRead({read.instruction, read.operand});
  if (!run.uninitializedReads.empty())
    std::fprintf(stderr,
                 "warning: %zu reads of never-written memory (first: instruction %lld %s)\n",
                 run.uninitializedReads.size(),
                 static_cast<long long>(run.uninitializedReads[0].instruction),
                 run.uninitializedReads[0].operand.c_str());

  if (auto path = args.get("dump-asm"))
    kernels::writeFileAtomically(*path, isa::printProgram(run.program));
  if (auto path = args.get("summary-json"))
    kernels::writeFileAtomically(*path, summary.dump(2) + "\n");
  if (auto path = args.get("trace")) {
    progress.phase("writing " + *path);
    kernels::appendOccupancyCounters(log, run.allocations);
    traces::writeChromeTrace(*path, run.program, log, summary, kernels::traceMachine(machine));
    progress.done();
  }
  if (auto path = args.get("csv")) traces::writeInstructionCsv(*path, run.program, log);
  if (outputDir) writeOutputs(run.outputs, *outputDir);

  if (check) {
    const double tol = kernels::tolerance(dtype);
    const bool ok = error <= tol;
    std::printf("check: normalized error %.3g (tolerance %.0e): %s\n", error, tol,
                ok ? "ok" : "FAILED");
    if (!ok) return 1;
  }
  return 0;
}

}  // namespace neuronsim::tools
