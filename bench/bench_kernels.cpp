// Kernel suite: every library kernel on representative shapes, timing-only, one table of
// simulated time, roofline %, MFU/MBU, the busiest engine, host time and peak RSS.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "isa/error.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "sim/machine_config.h"

namespace {

using namespace neuronsim;
using nlohmann::json;

/// One benchmark row: a kernel, its dtype, the input shapes given (the rest derived) and the
/// parameters, as on the `neuronsim run` command line.
struct BenchCase {
  std::string kernel;
  std::string dtype;
  std::vector<std::pair<std::string, std::string>> shapes;  ///< NAME, AxBxC
  std::vector<std::pair<std::string, std::string>> params;  ///< API name, value text
};

/// The representative shapes: the issue 10 targets, the documented defaults, odd sizes.
std::vector<BenchCase> fullSuite() {
  const std::vector<std::pair<std::string, std::string>> pool = {{"kernel_size", "2"}};
  const std::vector<std::pair<std::string, std::string>> poolIn = {
      {"input_tensor", "2x64x16x64x64"}};
  return {
      {"matmul", "bf16", {{"lhsT", "4096x4096"}, {"rhs", "4096x8192"}}, {}},
      {"matmul", "bf16", {{"lhsT", "16384x512"}, {"rhs", "16384x1024"}}, {}},
      {"matmul", "bf16", {{"lhsT", "2048x1024"}, {"rhs", "2048x2048"}}, {}},
      {"matmul", "fp32", {{"lhsT", "1030x520"}, {"rhs", "1030x700"}}, {}},
      {"matmul", "bf16", {{"lhsT", "1030x520"}, {"rhs", "1030x700"}}, {}},
      {"matmul", "bf16", {{"lhsT", "777x1300"}, {"rhs", "777x513"}}, {}},
      {"matmul", "fp32", {{"lhsT", "8192x2048"}, {"rhs", "8192x1536"}}, {}},
      {"avg_pooling_3d", "fp32", poolIn, pool},
      {"max_pooling_3d", "fp32", poolIn, pool},
      {"avg_pooling_3d_backward", "fp32", poolIn, pool},
      {"max_pooling_3d_backward", "fp32", poolIn, pool},
      {"avg_pooling_3d_backward", "fp32", {{"input_tensor", "1x1x64x256x256"}}, pool},
      {"conv3d",
       "bf16",
       {{"x_in", "1x128x8x32x32"}, {"filters", "3x3x3x128x128"}},
       {{"padding", "1"}}},
      {"conv3d_transpose",
       "bf16",
       {{"x_in", "1x128x8x16x16"}, {"filters", "2x2x2x128x64"}},
       {{"stride", "2"}}},
      {"conv3d_bwd",
       "bf16",
       {{"dy", "1x256x8x32x32"}, {"x_in", "1x256x8x32x32"}, {"filters", "3x3x3x256x256"}},
       {{"padding", "1"}}},
      {"conv3d_bwd",
       "bf16",
       {{"dy", "1x32x16x64x64"}, {"x_in", "1x32x16x64x64"}, {"filters", "3x3x3x32x32"}},
       {{"padding", "1"}}},
      {"matmul_tutorial", "bf16", {}, {{"variant", "t1_optimized"}}},
      {"matmul_tutorial", "bf16", {}, {{"variant", "t2_hoisted"}}},
  };
}

/// Tiny shapes for the smoke test: every kernel runs, nothing is timed.
std::vector<BenchCase> quickSuite() {
  const std::vector<std::pair<std::string, std::string>> poolIn = {{"input_tensor", "1x4x4x6x6"}};
  return {
      {"matmul", "bf16", {{"lhsT", "130x129"}, {"rhs", "130x513"}}, {}},
      {"avg_pooling_3d", "fp32", poolIn, {}},
      {"max_pooling_3d", "fp32", poolIn, {}},
      {"avg_pooling_3d_backward", "fp32", poolIn, {}},
      {"max_pooling_3d_backward", "fp32", poolIn, {}},
      {"conv3d", "bf16", {{"x_in", "1x8x4x6x6"}, {"filters", "3x3x3x8x8"}}, {}},
      {"conv3d_transpose", "bf16", {{"x_in", "1x8x2x4x4"}, {"filters", "2x2x2x8x8"}}, {}},
      {"conv3d_bwd",
       "bf16",
       {{"dy", "1x8x2x4x4"}, {"x_in", "1x8x4x6x6"}, {"filters", "3x3x3x8x8"}},
       {}},
  };
}

kernels::Shape parseShape(const std::string& text) {
  kernels::Shape shape;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('x', start);
    shape.push_back(std::stoll(text.substr(start, end - start)));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return shape;
}

std::string caseShapes(const BenchCase& c) {
  std::vector<std::string> parts;
  for (const auto& [name, shape] : c.shapes) parts.push_back(fmt::format("{}={}", name, shape));
  for (const auto& [name, value] : c.params)
    parts.push_back(fmt::format("--{} {}", kernels::flagName(name), value));
  return parts.empty() ? "default" : fmt::format("{}", fmt::join(parts, " "));
}

/// The case as `neuronsim sweep` arguments: "KERNEL --dtype D --shape NAME=AxB --param NAME=V".
std::string sweepArguments(const BenchCase& c) {
  std::string line = fmt::format("{} --dtype {}", c.kernel, c.dtype);
  for (const auto& [name, shape] : c.shapes) line += fmt::format(" --shape {}={}", name, shape);
  for (const auto& [name, value] : c.params) line += fmt::format(" --param {}={}", name, value);
  return line;
}

/// Runs one case timing-only and returns its summary (or {"error": ...}).
json runCase(const BenchCase& c, const sim::MachineConfig& machine) {
  try {
    const kernels::KernelSpec& spec = kernels::findKernel(c.kernel);
    const kernels::ParamValues params = kernels::parseParams(spec, c.params);
    kernels::InputRequest request;
    for (const auto& [name, shape] : c.shapes) request.shapes.emplace_back(name, parseShape(shape));
    const kernels::ShapeMap shapes = kernels::resolveInputShapes(spec, request, params);
    kernels::RunOptions options;
    options.dtype = c.dtype == "bf16" ? isa::Dtype::Bf16 : isa::Dtype::Fp32;
    options.mode = kernels::RunMode::TimingOnly;
    const kernels::KernelRun run =
        kernels::runKernel(spec, params, kernels::shapesOnly(shapes), machine, options);
    json summary = kernels::runSummary(
        kernels::kernelRunInfo(spec, run.shapes, options.dtype, machine, params), run.sim,
        run.runSeconds);
    summary["build_seconds"] = run.buildSeconds;
    return summary;
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

struct Row {
  const BenchCase* c;
  json summary;
  double hostSeconds = 0;
  double peakRssMb = 0;
};

/// Runs `c` in a child process, so that its peak RSS is its own.
Row runIsolated(const BenchCase& c, const sim::MachineConfig& machine) {
  Row row{&c, {}, 0, 0};
  int fds[2];
  if (pipe(fds) != 0) throw Error("bench_kernels: pipe failed");
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw Error("bench_kernels: fork failed");
  if (pid == 0) {
    close(fds[0]);
    const std::string text = runCase(c, machine).dump();
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  std::array<char, 4096> buffer{};
  for (ssize_t n; (n = read(fds[0], buffer.data(), buffer.size())) > 0;)
    text.append(buffer.data(), static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  row.hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  row.peakRssMb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  row.summary = json::parse(text, nullptr, false);
  if (row.summary.is_discarded() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    row.summary = {{"error", fmt::format("child ended with status {}", status)}};
  return row;
}

/// "tensor 97%": the engine (or DMA) active the largest share of the run.
std::string busiest(const json& s) {
  std::string name = "dma";
  double best = s["dma"]["active_percent"].get<double>();
  for (const auto& [engine, totals] : s["engines"].items()) {
    const double active = totals["active_percent"].get<double>();
    if (active > best) {
      best = active;
      name = engine;
    }
  }
  return fmt::format("{} {:.0f}%", name, best);
}

std::vector<std::string> cells(const Row& r) {
  const json& s = r.summary;
  std::vector<std::string> v = {r.c->kernel, r.c->dtype, caseShapes(*r.c)};
  if (s.contains("error")) {
    v.push_back(fmt::format("error: {}", s["error"].get<std::string>()));
    return v;
  }
  const double total = s["total_ns"].get<double>();
  v.push_back(fmt::format("{:.1f}", total / 1000.0));
  v.push_back(fmt::format("{:.1f} ({})", s["roofline_ns"].get<double>() / 1000.0,
                          s["roofline_bound"].get<std::string>()));
  v.push_back(fmt::format("{:.1f}", s["roofline_percent"].get<double>()));
  v.push_back(fmt::format("{:.1f}", s["mfu_percent"].get<double>()));
  v.push_back(fmt::format("{:.1f}", s["mbu_percent"].get<double>()));
  v.push_back(busiest(s));
  v.push_back(fmt::format("{}", s["instructions"].get<int64_t>()));
  v.push_back(fmt::format("{:.2f}", r.hostSeconds));
  v.push_back(fmt::format("{:.0f}", r.peakRssMb));
  return v;
}

const std::vector<std::string> kHeader = {
    "kernel", "dtype", "shapes, params", "simulated us", "roofline us", "roofline %",
    "MFU %",  "MBU %", "busiest engine", "instructions", "host s",      "peak RSS MB"};

void printTable(const std::vector<std::vector<std::string>>& rows, bool markdown) {
  if (markdown) {
    std::printf("| %s |\n", fmt::format("{}", fmt::join(kHeader, " | ")).c_str());
    std::string rule = "|";
    for (size_t i = 0; i < kHeader.size(); ++i) rule += "---|";
    std::printf("%s\n", rule.c_str());
    for (const auto& row : rows)
      std::printf("| %s |\n", fmt::format("{}", fmt::join(row, " | ")).c_str());
    return;
  }
  std::vector<size_t> width(kHeader.size(), 0);
  for (size_t i = 0; i < kHeader.size(); ++i) width[i] = kHeader[i].size();
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += fmt::format("{:<{}}  ", row[i], i < width.size() ? width[i] : 0);
    std::printf("%s\n", line.c_str());
  };
  print(kHeader);
  for (const auto& row : rows) print(row);
}

/// `git describe`-like commit of the source tree, "-dirty" when it has uncommitted changes.
std::string sourceCommit() {
  auto run = [](const std::string& command) {
    std::string out;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      std::array<char, 128> buffer{};
      while (fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
      if (pclose(pipe) != 0) return std::string();
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  };
  const std::string dir = NEURONSIM_SOURCE_DIR;
  const std::string commit =
      run(fmt::format("git -C '{}' rev-parse --short HEAD 2>/dev/null", dir));
  if (commit.empty()) return "unknown";
  const bool clean =
      !run(fmt::format("git -C '{}' diff --quiet HEAD 2>/dev/null && echo clean", dir)).empty();
  return commit + (clean ? "" : "-dirty");
}

int usage(const char* message) {
  std::fprintf(stderr,
               "error: %s\nusage: bench_kernels [--markdown] [--quick] [--machine NAME|FILE] "
               "[--only KERNEL] [--list]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool markdown = false, quick = false, list = false;
  std::string machineName = "trn2", only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--markdown") {
      markdown = true;
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--list") {
      list = true;
    } else if ((arg == "--machine" || arg == "--only") && i + 1 < argc) {
      (arg == "--machine" ? machineName : only) = argv[++i];
    } else {
      return usage(fmt::format("unknown argument '{}'", arg).c_str());
    }
  }
  try {
    const std::vector<BenchCase> suite = quick ? quickSuite() : fullSuite();
    if (list) {  // one line per case, as `neuronsim sweep` arguments (bench/sweep_defaults.sh)
      for (const BenchCase& c : suite)
        if (only.empty() || c.kernel == only) std::printf("%s\n", sweepArguments(c).c_str());
      return 0;
    }
    const sim::MachineConfig machine = sim::loadMachine(machineName);
    const std::time_t now = std::time(nullptr);
    std::array<char, 32> date{};
    std::strftime(date.data(), date.size(), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("Kernel benchmarks: %s, machine %s, commit %s, timing-only\n\n", date.data(),
                machine.name.c_str(), sourceCommit().c_str());
    std::fflush(stdout);
    std::vector<std::vector<std::string>> rows;
    int failures = 0;
    for (const BenchCase& c : suite) {
      if (!only.empty() && c.kernel != only) continue;
      const Row row = runIsolated(c, machine);
      failures += row.summary.contains("error");
      rows.push_back(cells(row));
      std::fprintf(stderr, "bench_kernels: %s %s done (%.1f s)\n", c.kernel.c_str(),
                   caseShapes(c).c_str(), row.hostSeconds);
    }
    printTable(rows, markdown);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    return usage(e.what());
  }
}
