// neuronsim run KERNEL: build a registered kernel's program for given or generated inputs,
// simulate it and print its summary (DESIGN.md section 4). One CLI11 subcommand per kernel, so
// `neuronsim run KERNEL --help` lists that kernel's parameters.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/shape_text.h"
#include "kernels/harness/host_memory.h"
#include "kernels/harness/progress.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_outputs.h"
#include "kernels/harness/run_summary.h"
#include "kernels/harness/schedule_effect.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "tools/commands.h"
#include "tools/run_flags.h"
#include "traces/summary.h"

namespace neuronsim::tools {

namespace {

using kernels::KernelSpec;

/// Everything given after `run KERNEL`.
struct RunFlags {
  CommonRunFlags common;
  std::vector<std::string> shapes;
  std::string seed, dtype;
  bool check = false;
  CLI::Option *seedOption = nullptr, *dtypeOption = nullptr;
  std::map<std::string, std::string> params;         ///< API name -> text
  std::map<std::string, CLI::Option*> paramOptions;  ///< API name -> its option
};

uint64_t parseSeed(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(
        fmt::format("run: --seed takes a non-negative integer below 10^19, not '{}'", text));
  return std::stoull(text);
}

kernels::InputRequest inputRequest(const RunFlags& flags, uint64_t seed) {
  kernels::InputRequest request;
  request.seed = seed;
  for (const std::string& text : flags.common.inputs)
    request.files.push_back(kernels::splitAssignment(text, "--input"));
  for (const std::string& text : flags.shapes) {
    const auto [name, shape] = kernels::splitAssignment(text, "--shape");
    request.shapes.emplace_back(name, isa::parseShape(shape, fmt::format("run: --shape {}", name)));
  }
  return request;
}

std::vector<std::string> names(const kernels::ShapeMap& shapes) {
  std::vector<std::string> out;
  for (const auto& [name, shape] : shapes) out.push_back(name);
  return out;
}

/// Throws "run KERNEL: unknown option --x (a parameter of K1, K2; ...)" when the first unknown
/// option is another kernel's parameter, or says how to write sweep's --param NAME=V; does
/// nothing otherwise (checkExtras reports the rest).
void refuseOtherKernelsParam(const KernelSpec& spec, const CLI::App* app, const std::string& who) {
  const std::vector<std::string> extras = app->remaining();
  if (extras.empty() || extras[0].rfind("--", 0) != 0) return;
  const std::string flag = extras[0].substr(2, extras[0].find('=') - 2);
  if (flag == "param") {  // sweep's NAME=V1,V2 axis: run takes one value as --NAME V
    const size_t eq = extras[0].find('=');
    const std::string axis =
        eq != std::string::npos ? extras[0].substr(eq + 1) : (extras.size() > 1 ? extras[1] : "");
    const size_t split = axis.find('=');
    const bool named = split != std::string::npos && split > 0;
    std::string value = named ? axis.substr(split + 1, axis.find(',') - split - 1) : "VALUE";
    std::replace(value.begin(), value.end(), ':', ',');  // an int3's colons
    throw Error(fmt::format(
        "{}: unknown option --param (sweep's; run takes a parameter as a flag: --{} {})", who,
        named ? kernels::flagName(axis.substr(0, split)) : "NAME", value));
  }
  std::vector<std::string> owners;
  for (const KernelSpec& other : kernels::kernelRegistry())
    for (const kernels::ParamSpec& p : other.params)
      if (kernels::flagName(p.name) == flag) owners.push_back(other.name);
  if (owners.empty()) return;
  throw Error(
      fmt::format("{}: unknown option --{} (a parameter of {}; {}'s are in neuronsim run {} "
                  "--help)",
                  who, flag, fmt::join(owners, ", "), spec.name, spec.name));
}

int runKernelCommand(const KernelSpec& spec, const CLI::App* app, const RunFlags& flags) {
  const std::string who = fmt::format("run {}", spec.name);
  refuseOtherKernelsParam(spec, app, who);
  checkExtras(app, who);
  const CommonRunFlags& f = flags.common;
  const RunMode mode = f.mode("run");
  const bool detectRaces = f.detectRaces("run");
  if (mode == RunMode::TimingOnly && flags.check)
    throw Error("run: --timing-only computes no outputs to --check");
  if (flags.check && spec.reference == nullptr)
    throw Error(fmt::format("run: {} has no reference to --check against", spec.name));
  const kernels::OutputRequest request = f.outputRequest("run", mode);
  const isa::Dtype dtype = parseDtype("run", valueOr(flags.dtypeOption, flags.dtype, "fp32"));
  const uint64_t seed = parseSeed(valueOr(flags.seedOption, flags.seed, "0"));

  // 1. Everything checkable before any tensor data exists: parameters, machine, shapes, files.
  std::vector<std::pair<std::string, std::string>> paramTexts;
  for (const auto& [name, option] : flags.paramOptions)
    if (option->count() > 0) {
      const std::string& text = flags.params.at(name);
      paramTexts.emplace_back(
          name, text.empty() && option->get_expected_min() == 0 ? "true" : text);  // bare bool
    }
  const kernels::ParamValues params = kernels::parseParams(spec, paramTexts);
  const sim::MachineConfig machine = sim::loadMachine(f.machineName(), f.sets);
  const kernels::InputRequest inputs = inputRequest(flags, seed);
  const kernels::ShapeMap inputShapes = kernels::resolveInputShapes(spec, inputs, params);
  const kernels::KernelShapes shapes = kernels::checkShapes(spec, inputShapes, params);
  isa::OutputSet outputs;
  kernels::declareOutputs(outputs, request, names(shapes.outputs));
  kernels::checkHostMemory(
      who, kernels::kernelRunMemory(spec, shapes, dtype, machine.geometry, mode, flags.check));
  kernels::ProgressMonitor progress(stderr);
  const auto phase = [&](const std::string& name) { progress.phase(name); };
  kernels::KernelRun run = kernels::buildRun(spec, params, shapes, dtype, machine.geometry, phase);
  phase("comparing the forced schedule parameters with their other values");
  for (const kernels::IneffectiveParam& param : kernels::ineffectiveScheduleParams(
           spec, paramTexts, shapes, dtype, machine.geometry, run.program, f.strict)) {
    const std::string line = kernels::ineffectiveText(param, false);
    if (f.strict) throw Error(fmt::format("{}: --strict: {}", who, line));
    std::fprintf(stderr, "warning: %s: %s\n", who.c_str(), line.c_str());
  }
  if (f.dryRun) return dryRunDone(who);

  // 2. The run of the program just built.
  traces::EventLog log;
  kernels::RunOptions options;
  options.dtype = dtype;
  options.mode = mode;
  options.detectRaces = detectRaces;
  if (request.wantsEvents()) options.sink = &log;
  options.phase = phase;
  const kernels::HostTensors values =
      mode == RunMode::TimingOnly ? kernels::shapesOnly(inputShapes)
                                  : kernels::loadInputs(spec, inputs, inputShapes, dtype, params);
  kernels::simulateRun(run, values, machine, options);
  progress.done();
  double error = 0;
  if (flags.check) error = kernels::maxNormalizedError(run.outputs, spec.reference(values, params));

  // 3. What it tells (--strict refuses before anything is printed), then the files, all together.
  kernels::reportDiagnostics(who, run.program, run.sim.races, run.uninitializedReads, f.strict);
  nlohmann::json summary;
  if (mode == RunMode::Interpret) {
    print("{}: interpreted {} instructions in {:.3f} s (build {:.3f} s)\n", spec.name,
          run.program.instructions.size(), run.runSeconds, run.buildSeconds);
  } else {
    summary = kernels::runSummary(kernels::kernelRunInfo(spec, run.shapes, dtype, machine, params),
                                  run.sim, run.runSeconds);
    summary["build_seconds"] = run.buildSeconds;
    summary["seed"] = seed;
    if (flags.check) summary["check_error"] = error;
    std::fputs(traces::summaryText(summary).c_str(), stdout);
  }

  kernels::RunProducts products;
  products.program = &run.program;
  products.log = &log;
  products.allocations = &run.allocations;
  products.uninitializedReads = &run.uninitializedReads;
  products.summary = &summary;
  products.outputs = &run.outputs;
  products.machine = &machine;
  kernels::writeOutputs(outputs, request, products, &progress);

  if (!flags.check) return 0;
  const double tolerance = kernels::tolerance(dtype);
  const bool ok = error <= tolerance;
  print("check: normalized error {:.3g} (tolerance {:.0e}): {}\n", error, tolerance,
        ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

/// "NAME (optional), default shape [..]" lines for the kernel's help footer.
std::string tensorsText(const KernelSpec& spec) {
  std::string text = "inputs:\n";
  for (const auto& t : spec.inputs) {
    const auto shape = spec.defaultShapes.find(t.name);
    text += fmt::format("  {:<16} {}{}{}\n", t.name, t.meaning, t.optional ? " (optional)" : "",
                        shape == spec.defaultShapes.end()
                            ? ""
                            : fmt::format(", default shape {}", kernels::shapeText(shape->second)));
  }
  text += "outputs:\n";
  for (const auto& t : spec.outputs) text += fmt::format("  {:<16} {}\n", t.name, t.meaning);
  return text;
}

void addParams(CLI::App* sub, const KernelSpec& spec, RunFlags& flags) {
  for (const kernels::ParamSpec& p : spec.params) {
    std::string type(kernels::paramTypeName(p.type));
    if (p.type == kernels::ParamType::Enum) type = fmt::format("{}", fmt::join(p.choices, "|"));
    if (p.schedule && p.type != kernels::ParamType::Enum) type += "|auto";
    std::string help =
        fmt::format("{} (default {}", p.meaning, p.defaultValue.empty() ? "unset" : p.defaultValue);
    if (p.schedule && !kernels::sweepCandidates(p).empty())
      help += fmt::format("; sweep tries {}", fmt::join(kernels::sweepCandidates(p), ","));
    help += ")";
    CLI::Option* option =
        addValue(sub, fmt::format("--{}", kernels::flagName(p.name)), flags.params[p.name], help,
                 p.type == kernels::ParamType::Bool ? "[true|false]" : type);
    if (p.type == kernels::ParamType::Bool) option->expected(0, 1);
    option->group(p.schedule ? "Schedule parameters (auto: the kernel chooses)"
                             : "Kernel parameters");
    flags.paramOptions[p.name] = option;
  }
}

Command addKernelCommand(CLI::App* run, const KernelSpec& spec) {
  CLI::App* sub = addSubcommand(*run, spec.name, spec.description);
  sub->footer(
      fmt::format("{}\nInputs not given by --input are generated from a seeded normal distribution "
                  "at their\n--shape, at the shape the kernel derives from the given ones or, with "
                  "no --input at all,\nat the default shape; otherwise they are required "
                  "(docs/kernels.md).\n--check exits 1 above the tolerance (normalized error 1e-4 "
                  "fp32, 2e-2 bf16).",
                  tensorsText(spec)));
  auto flags = std::make_shared<RunFlags>();
  flags->common.add(sub, CommonRunFlags::Command::Run);
  addRepeated(sub, "--shape", flags->shapes, "shape of a generated input (repeatable)",
              "NAME=AxBxC");
  flags->seedOption =
      addValue(sub, "--seed", flags->seed, "seed of generated inputs (default 0)", "N");
  flags->dtypeOption =
      addValue(sub, "--dtype", flags->dtype, "kernel dtype (default fp32)", "fp32|bf16");
  addFlag(sub, "--check", flags->check,
          "compare with the C++ reference; exit 1 above the tolerance");
  addParams(sub, spec, *flags);
  return {sub, [sub, &spec, flags] { return runKernelCommand(spec, sub, *flags); }};
}

}  // namespace

Command addRunCommand(CLI::App& app) {
  CLI::App* run = addSubcommand(app, "run", "build a kernel's program and simulate it");
  run->footer(
      "Builds KERNEL's program, simulates it and prints a summary. Options follow KERNEL;\n"
      "'neuronsim run KERNEL --help' lists them with the kernel's tensors and parameters.\n"
      "KERNEL may also be FILE.py:NAME, a kernel written in Python (docs/python.md).");
  auto kernelName = std::make_shared<std::vector<std::string>>();
  addPositionals(run, "KERNEL", *kernelName, "a kernel from neuronsim list");
  auto kernels = std::make_shared<std::vector<Command>>();
  for (const KernelSpec& spec : kernels::kernelRegistry())
    kernels->push_back(addKernelCommand(run, spec));
  return {run, [run, kernelName, kernels] {
            for (const Command& kernel : *kernels) {
              if (!kernel.app->parsed()) continue;
              if (!kernelName->empty() || !run->remaining().empty())
                throw Error(
                    fmt::format("run: options go after KERNEL ('{}' came before {})",
                                run->remaining().empty() ? (*kernelName)[0] : run->remaining()[0],
                                kernel.app->get_name()));
              return kernel.run();
            }
            if (!kernelName->empty())
              kernels::findKernel((*kernelName)[0]);  // throws: unknown kernel
            checkExtras(run, "run");
            throw Error("run: expected a KERNEL (neuronsim list shows them)");
          }};
}

}  // namespace neuronsim::tools
