// neuronsim sweep KERNEL: simulate a grid of parameter values on all local cores, one forked
// process per configuration (SystemC keeps one simulation per process at a time), and print the
// configurations fastest first; neuronsim sweep merge joins the results of --shard runs.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/file_write.h"
#include "isa/shape_text.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/registry.h"
#include "kernels/sweep/child_pool.h"
#include "kernels/sweep/sweep_grid.h"
#include "kernels/sweep/sweep_point.h"
#include "kernels/sweep/sweep_progress.h"
#include "kernels/sweep/sweep_results.h"
#include "kernels/sweep/sweep_table.h"
#include "sim/machine_config.h"
#include "tools/commands.h"
#include "tools/run_flags.h"

namespace neuronsim::tools {

namespace {

/// Largest sweep result file `sweep merge` reads.
constexpr int64_t kMaxSweepFileBytes = int64_t{1} << 30;
/// Most processes `--jobs` may ask for.
constexpr int64_t kMaxJobs = 1024;

/// The files a sweep or merge writes.
struct SweepFiles {
  std::string csv, json;
  CLI::Option *csvOption = nullptr, *jsonOption = nullptr;

  void add(CLI::App* app) {
    csvOption = addValue(app, "--csv", csv, "the table as CSV (with host time and memory)", "FILE");
    jsonOption =
        addValue(app, "--json", json, "every result as JSON (input of sweep merge)", "FILE");
  }
  /// Declares the files now, so a bad path fails before any simulation.
  void declare(isa::OutputSet& set) const {
    if (csvOption->count() > 0) set.add("--csv", csv);
    if (jsonOption->count() > 0) set.add("--json", json);
  }
  /// Prints the table and writes the files, all or none.
  void finish(isa::OutputSet& set, const nlohmann::json& document) const {
    std::fputs(kernels::sweepTable(document).c_str(), stdout);
    if (csvOption->count() > 0)
      set.write(csv, [&](const std::string& temporary) {
        isa::writeFileDirectly(temporary, kernels::sweepCsv(document));
      });
    if (jsonOption->count() > 0)
      set.write(json, [&](const std::string& temporary) {
        isa::writeFileDirectly(temporary, fmt::format("{}\n", document.dump(1)));
      });
    set.commit();
  }
};

struct SweepFlags {
  std::vector<std::string> kernel, params, shapes, sets;
  std::string dtype, machine, jobs, shard;
  bool dryRun = false, noRaceCheck = false;
  CLI::Option *dtypeOption = nullptr, *machineOption = nullptr, *jobsOption = nullptr,
              *shardOption = nullptr;
  SweepFiles files;
};

int parseJobs(const std::string& text) {
  if (text.empty() || text.size() > 4 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoll(text) < 1 ||
      std::stoll(text) > kMaxJobs)
    throw Error(fmt::format("sweep: --jobs takes a count from 1 to {}, not '{}'", kMaxJobs, text));
  return static_cast<int>(std::stoll(text));
}

std::string label(const kernels::SweepPoint& point) {
  std::string text;
  for (const auto& [name, value] : point.params)
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  return text.empty() ? "defaults" : text;
}

/// The child's work: one configuration, its metrics as JSON text.
std::string runPoint(const kernels::SweepSetup& setup, const kernels::SweepPoint& point) {
  try {
    return kernels::runSweepPoint(setup, point).dump();
  } catch (const std::bad_alloc&) {
    throw Error("out of host memory");
  }
}

/// Throws "sweep: unknown option --x (why)" when the first unknown option is one of run's or a
/// parameter of KERNEL given as a flag; does nothing otherwise (checkExtras reports the rest).
void refuseRunOptions(const CLI::App* app, const std::vector<std::string>& kernel) {
  const std::vector<std::string> extras = app->remaining();
  if (extras.empty() || extras[0].rfind("--", 0) != 0) return;
  const std::string flag = extras[0].substr(0, extras[0].find('='));
  if (flag == "--timing-only")
    throw Error("sweep: unknown option --timing-only (every configuration runs timing-only)");
  for (const char* runOnly : {"--input", "--seed", "--output-dir", "--trace", "--summary-json",
                              "--dump-asm", "--interpret", "--check", "--strict"})
    if (flag == runOnly)
      throw Error(fmt::format(
          "sweep: unknown option {} (run's: sweep simulates timing-only with no tensor data and "
          "no trace; run one configuration with neuronsim run {} ... {})",
          flag, kernel.empty() ? "KERNEL" : kernel[0], flag));
  for (const kernels::KernelSpec& spec : kernels::kernelRegistry()) {
    if (kernel.empty() || spec.name != kernel[0]) continue;
    for (const kernels::ParamSpec& p : spec.params)
      if (flag == fmt::format("--{}", kernels::flagName(p.name)))
        throw Error(
            fmt::format("sweep: unknown option {} (a parameter of {}: --param {}=V1,V2,... "
                        "sweeps it, one value fixes it)",
                        flag, spec.name, p.name));
  }
}

int runSweep(CLI::App* app, const SweepFlags& flags) {
  refuseRunOptions(app, flags.kernel);
  checkExtras(app, "sweep");
  if (flags.kernel.empty()) throw Error("sweep: expected a KERNEL (neuronsim list shows them)");
  if (flags.kernel.size() > 1)
    throw Error(fmt::format("sweep: unexpected argument '{}'", flags.kernel[1]));
  if (isPythonKernel(flags.kernel[0].c_str()))
    throw Error(fmt::format(
        "sweep: {} is a Python kernel; sweep takes a library kernel (neuronsim list), so loop "
        "over neuronsim.run in Python instead (docs/python.md, Tuning)",
        flags.kernel[0]));
  kernels::SweepSetup setup;
  setup.spec = &kernels::findKernel(flags.kernel[0]);
  const kernels::KernelSpec& spec = *setup.spec;
  if (flags.dtypeOption->count() > 0) setup.dtype = parseDtype("sweep", flags.dtype);
  if (flags.machineOption->count() > 0) setup.machine = flags.machine;
  setup.sets = flags.sets;
  setup.raceCheck = !flags.noRaceCheck;
  sim::loadMachine(setup.machine, setup.sets);  // throws: unknown machine, bad --set
  for (const std::string& text : flags.shapes) {
    const auto [name, shape] = kernels::splitAssignment(text, "--shape");
    setup.shapes.emplace_back(name, isa::parseShape(shape, fmt::format("sweep: --shape {}", name)));
  }
  kernels::InputRequest given;
  given.shapes = setup.shapes;
  kernels::givenInputShapes(spec, given);  // throws: an unknown input, one shaped twice
  std::vector<kernels::SweepAxis> axes;
  for (const std::string& text : flags.params) axes.push_back(kernels::parseAxis(spec, text));
  if (axes.empty()) axes = kernels::scheduleAxes(spec);
  const std::vector<kernels::SweepPoint> grid = kernels::expandGrid(spec, axes);
  std::optional<kernels::Shard> shard;
  if (flags.shardOption->count() > 0) shard = kernels::parseShard(flags.shard);
  const std::vector<kernels::SweepPoint> points = shard ? kernels::shardOf(grid, *shard) : grid;
  const int jobs = flags.jobsOption->count() > 0 ? parseJobs(flags.jobs) : kernels::localCores();
  isa::OutputSet outputs;
  flags.files.declare(outputs);
  if (flags.dryRun)
    return dryRunDone(
        fmt::format("sweep {} ({} of {} configurations)", spec.name, points.size(), grid.size()));

  std::vector<nlohmann::json> results;
  kernels::SweepProgress progress(stderr, static_cast<int64_t>(points.size()));
  kernels::runInChildren(
      static_cast<int64_t>(points.size()), jobs,
      [&](int64_t i) { return runPoint(setup, points[static_cast<size_t>(i)]); },
      [&](int64_t i, const kernels::ChildOutcome& outcome) {
        results.push_back(kernels::sweepResult(points[static_cast<size_t>(i)], outcome));
        const nlohmann::json& r = results.back();
        progress.finished(label(points[static_cast<size_t>(i)]), r["status"] == "ok",
                          r["status"] == "ok"
                              ? fmt::format("{:.3f} us", r["total_ns"].get<double>() / 1000.0)
                              : fmt::format("failed: {}", r["reason"].get<std::string>()));
      });
  progress.close();
  const size_t ran = results.size();
  const bool anyOk = std::any_of(results.begin(), results.end(),
                                 [](const nlohmann::json& r) { return r["status"] == "ok"; });
  flags.files.finish(
      outputs,
      kernels::sweepDocument(kernels::sweepHeader(setup, axes, static_cast<int64_t>(grid.size())),
                             shard, std::move(results)));
  return ran > 0 && !anyOk ? 1 : 0;
}

int runMerge(CLI::App* app, const std::vector<std::string>& paths, const SweepFiles& files) {
  checkExtras(app, "sweep merge");
  isa::OutputSet outputs;
  files.declare(outputs);
  std::vector<std::pair<std::string, nlohmann::json>> documents;
  for (const std::string& path : paths) {
    std::string text;
    try {
      text = isa::readTextFile(path, kMaxSweepFileBytes, "sweep result file");
    } catch (const Error& e) {
      throw Error(fmt::format("sweep merge: {}", e.what()));
    }
    nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded())
      throw Error(fmt::format("sweep merge: {}: not JSON (expected a sweep --json file)", path));
    documents.emplace_back(path, std::move(document));
  }
  files.finish(outputs, kernels::mergeSweeps(documents));
  return 0;
}

}  // namespace

Command addSweepCommand(CLI::App& app) {
  CLI::App* sweep =
      addSubcommand(app, "sweep", "simulate a kernel over a grid of parameter values");
  sweep->footer(
      "Runs KERNEL timing-only for every combination of the --param values, --jobs at a time,\n"
      "and prints the configurations fastest first. Without --param it sweeps the kernel's\n"
      "schedule parameters over their candidates. A configuration that fails is listed with\n"
      "its reason. An int3/int6 value is written with colons (2:2:3). docs/sweep.md.");
  auto flags = std::make_shared<SweepFlags>();
  addPositionals(sweep, "KERNEL", flags->kernel, "a kernel from neuronsim list");
  addRepeated(sweep, "--param", flags->params,
              "a swept parameter and its values; one value fixes it (repeatable)",
              "NAME=V1,V2,...");
  addRepeated(sweep, "--shape", flags->shapes, "shape of an input (repeatable)", "NAME=AxBxC");
  flags->dtypeOption =
      addValue(sweep, "--dtype", flags->dtype, "kernel dtype (default fp32)", "fp32|bf16");
  flags->machineOption =
      addValue(sweep, "--machine", flags->machine, "trn2 (default), trn1 or a FILE.json", "M");
  addRepeated(sweep, "--set", flags->sets, "override one machine parameter (repeatable)",
              "KEY=VALUE");
  flags->jobsOption = addValue(sweep, "--jobs", flags->jobs,
                               "configurations simulated at once (default: local cores)", "N");
  flags->shardOption = addValue(sweep, "--shard", flags->shard,
                                "run only slice I of N of the grid (for sweep merge)", "I/N");
  addFlag(sweep, "--no-race-check", flags->noRaceCheck,
          "skip race detection, which finds missing synchronization and fails a racy "
          "configuration (on by default); one thread then drives every engine (the fast path); "
          "the same times");
  flags->files.add(sweep);
  addFlag(sweep, "--dry-run", flags->dryRun,
          "check the arguments, the grid and the output paths, then stop: nothing is simulated "
          "or written");

  CLI::App* merge = addSubcommand(*sweep, "merge", "join the --json files of sweep --shard runs");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto mergeFiles = std::make_shared<SweepFiles>();
  addPositionals(merge, "FILES", *paths, "the shards' sweep --json files");
  mergeFiles->add(merge);
  return {sweep, [sweep, merge, flags, paths, mergeFiles] {
            if (merge->parsed()) return runMerge(merge, *paths, *mergeFiles);
            return runSweep(sweep, *flags);
          }};
}

}  // namespace neuronsim::tools
