// What tracing costs: a 4096x4096 by 4096x8192 bf16 matmul in timing-only mode, run with and
// without an event sink, then its Chrome trace written; prints each time and the trace's share.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "traces/chrome_trace.h"
#include "traces/summary.h"

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace neuronsim;
  const std::string path =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "bench_trace.json").string();
  const kernels::KernelSpec& spec = kernels::findKernel("matmul");
  const kernels::ParamValues params = kernels::parseParams(spec, {});
  const sim::MachineConfig machine = sim::loadMachine("trn2");
  const kernels::HostTensors inputs = {{"lhsT", {{4096, 4096}, std::vector<float>(4096 * 4096)}},
                                       {"rhs", {{4096, 8192}, std::vector<float>(4096 * 8192)}}};
  kernels::RunOptions options;
  options.dtype = isa::Dtype::Bf16;
  options.mode = kernels::RunMode::TimingOnly;

  auto start = std::chrono::steady_clock::now();
  kernels::runKernel(spec, params, inputs, machine, options);
  const double plainSeconds = secondsSince(start);

  traces::EventLog log;
  options.sink = &log;
  start = std::chrono::steady_clock::now();
  const kernels::KernelRun run = kernels::runKernel(spec, params, inputs, machine, options);
  const double tracedSeconds = secondsSince(start);

  start = std::chrono::steady_clock::now();
  traces::RunInfo info;
  info.kernel = spec.name;
  info.machine = machine.name;
  info.dtype = "bf16";
  traces::writeChromeTrace(path, run.program, log, traces::summaryJson(info, run.sim.totals));
  const double writeSeconds = secondsSince(start);

  std::printf("instructions: %zu, events: %zu instructions + %zu DMAs + %zu counters\n",
              run.program.instructions.size(), log.instructions.size(), log.dmas.size(),
              log.counters.size());
  std::printf("simulated: %.1f us; traced run: build %.3f s, simulate %.3f s\n",
              run.sim.totals.total.ns() / 1000, run.buildSeconds, run.runSeconds);
  std::printf("run without sink: %.3f s, with sink: %.3f s, trace write: %.3f s (%.1f MB)\n",
              plainSeconds, tracedSeconds, writeSeconds,
              static_cast<double>(std::filesystem::file_size(path)) / 1e6);
  std::printf("tracing cost: %.1f%% of the untraced run's host time\n",
              100.0 * (tracedSeconds - plainSeconds + writeSeconds) / plainSeconds);
  return 0;
}
