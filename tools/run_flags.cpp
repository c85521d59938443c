// Options shared by run and asm, and the checks between them.
#include "tools/run_flags.h"

#include <fmt/format.h>

#include <optional>

#include "isa/error.h"

namespace neuronsim::tools {

namespace {

std::optional<std::string> given(const CLI::Option* option, const std::string& value) {
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return value;
}

}  // namespace

isa::Dtype parseDtype(const std::string& who, const std::string& text) {
  if (text == "fp32") return isa::Dtype::Fp32;
  if (text == "bf16") return isa::Dtype::Bf16;
  throw Error(fmt::format("{}: --dtype takes fp32 or bf16, not '{}'", who, text));
}

void CommonRunFlags::add(CLI::App* app, Command command) {
  const std::string inputHelp =
      command == Command::Run ? "an input (float32/float64/float16, C order; repeatable)"
                              : "an input tensor (repeatable; every input tensor is required)";
  addRepeated(app, "--input", inputs, inputHelp, "NAME=FILE.npy");
  outputDirOption_ = addValue(app, "--output-dir", outputDir,
                              "write each output as DIR/NAME.npy (float32)", "DIR");
  traceOption_ = addValue(app, "--trace", trace, "Chrome/Perfetto trace with the summary embedded",
                          "FILE.json");
  summaryOption_ = addValue(app, "--summary-json", summaryJson, "the summary as JSON", "FILE");
  csvOption_ = addValue(app, "--csv", csv,
                        "the instruction table (start, end, engine, opcode, stall, ...)", "FILE");
  if (command == Command::Run)
    dumpAsmOption_ = addValue(app, "--dump-asm", dumpAsm, "the program as text assembly", "FILE");
  machineOption_ =
      addValue(app, "--machine", machine, "trn2 (default), trn1 or a machine FILE.json", "M");
  addRepeated(app, "--set", sets, "override one machine parameter (repeatable)", "KEY=VALUE");
  addFlag(app, "--timing-only", timingOnly,
          "simulate without numerics: no tensor data, no outputs");
  addFlag(app, "--interpret", interpret, "run the sequential interpreter only (no time)");
  addFlag(
      app, "--strict", strict,
      "races, never-written reads, unwritten outputs and schedule parameters with no effect are "
      "errors (exit 2, nothing printed or written), not warnings");
  if (command == Command::Run)
    addFlag(app, "--no-race-check", noRaceCheck,
            "skip race detection, which finds missing synchronization (on by default); faster, "
            "and with --timing-only and no --trace or --csv one thread drives every engine "
            "(the fast path); the same simulated times");
  addFlag(app, "--dry-run", dryRun,
          "check every argument, input file header and output path (run: and build the "
          "kernel), then stop: nothing is simulated or written");
}

RunMode CommonRunFlags::mode(const std::string& who) const {
  if (timingOnly && interpret)
    throw Error(fmt::format("{}: --timing-only and --interpret exclude each other", who));
  return interpret ? RunMode::Interpret : (timingOnly ? RunMode::TimingOnly : RunMode::Timed);
}

kernels::OutputRequest CommonRunFlags::outputRequest(const std::string& who, RunMode mode) const {
  kernels::OutputRequest request;
  request.outputDir = given(outputDirOption_, outputDir);
  request.trace = given(traceOption_, trace);
  request.summaryJson = given(summaryOption_, summaryJson);
  request.csv = given(csvOption_, csv);
  request.dumpAsm = given(dumpAsmOption_, dumpAsm);
  if (mode == RunMode::TimingOnly && request.outputDir)
    throw Error(fmt::format("{}: --timing-only computes no outputs; drop --output-dir", who));
  if (mode == RunMode::Interpret && (request.trace || request.summaryJson || request.csv))
    throw Error(fmt::format(
        "{}: --interpret measures no time; drop --trace, --csv and --summary-json", who));
  return request;
}

bool CommonRunFlags::detectRaces(const std::string& who) const {
  if (!noRaceCheck) return true;
  if (strict)
    throw Error(fmt::format(
        "{}: --strict makes races errors but --no-race-check detects none; drop one of them", who));
  if (interpret)
    throw Error(fmt::format("{}: --interpret detects no races; drop --no-race-check", who));
  return false;
}

std::string CommonRunFlags::machineName() const {
  return given(machineOption_, machine).value_or("trn2");
}

}  // namespace neuronsim::tools
