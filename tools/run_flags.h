#pragma once
// The options `run` and `asm` share: inputs, output files, machine, mode, --strict, --dry-run.

#include <string>
#include <vector>

#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_outputs.h"
#include "tools/cli.h"

namespace neuronsim::tools {

using kernels::RunMode;

/// "fp32" or "bf16"; throws neuronsim::Error "<who>: --dtype takes fp32 or bf16, not '...'".
isa::Dtype parseDtype(const std::string& who, const std::string& text);

struct CommonRunFlags {
  enum class Command { Run, Asm };

  std::vector<std::string> inputs;  ///< NAME=FILE.npy
  std::vector<std::string> sets;    ///< KEY=VALUE machine overrides
  std::string outputDir, trace, summaryJson, csv, dumpAsm, machine;
  bool timingOnly = false, interpret = false, strict = false, dryRun = false, noRaceCheck = false;

  /// Adds the options to `app` (--dump-asm and --no-race-check for run only).
  void add(CLI::App* app, Command command);
  /// The mode asked for; throws neuronsim::Error "<who>: ..." when --timing-only and --interpret
  /// meet.
  RunMode mode(const std::string& who) const;
  /// The files asked for; throws neuronsim::Error "<who>: ..." for a file the mode cannot produce.
  kernels::OutputRequest outputRequest(const std::string& who, RunMode mode) const;
  /// Whether the timed run detects races; throws neuronsim::Error "<who>: ..." when
  /// --no-race-check meets --strict or --interpret.
  bool detectRaces(const std::string& who) const;
  /// --machine, default trn2.
  std::string machineName() const;

 private:
  CLI::Option *outputDirOption_ = nullptr, *traceOption_ = nullptr, *summaryOption_ = nullptr,
              *csvOption_ = nullptr, *dumpAsmOption_ = nullptr, *machineOption_ = nullptr;
};

}  // namespace neuronsim::tools
