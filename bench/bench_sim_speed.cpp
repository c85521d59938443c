// Simulator speed: simulated instructions per second of host time, timing-only mode.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"

namespace {

using namespace neuronsim;

isa::AccessPattern tile(isa::Space space, int64_t offset, int64_t free) {
  isa::AccessPattern ap;
  ap.space = space;
  ap.partitionCount = 128;
  ap.offset = offset;
  ap.dims = {{1, free}};
  return ap;
}

/// A pipelined program: per step one matmul, one PSUM eviction on Vector, one activation on
/// Scalar, one memset on GpSimd, each engine signalling its semaphore; every 64 steps a DMA.
isa::Program buildProgram(int64_t steps) {
  isa::Program p;
  p.tensors.push_back({"x", {128, 512}, isa::Dtype::Fp32, isa::TensorKind::Input});
  p.semaphores = {"tensor", "vector", "scalar", "gpsimd", "dma"};
  p.instructions.reserve(static_cast<size_t>(steps * 4 + steps / 64 + 1));
  int64_t dmas = 0;
  for (int64_t i = 0; i < steps; ++i) {
    isa::Instruction mm;
    mm.opcode = isa::Opcode::NcMatmul;
    mm.engine = isa::Engine::Tensor;
    mm.dst = tile(isa::Space::Psum, (i % 4) * 2048, 512);
    isa::AccessPattern stat = tile(isa::Space::Sbuf, 0, 128);
    stat.dtype = isa::Dtype::Bf16;
    isa::AccessPattern mov = tile(isa::Space::Sbuf, 4096, 512);
    mov.dtype = isa::Dtype::Bf16;
    mm.srcs = {stat, mov};
    if (i >= 4) mm.waits.push_back({1, i - 3});  // PSUM buffer free again
    mm.signals.push_back({0, isa::SignalAt::Complete, 1});
    p.instructions.push_back(mm);

    isa::Instruction ev;
    ev.opcode = isa::Opcode::TensorCopy;
    ev.engine = isa::Engine::Vector;
    ev.dst = tile(isa::Space::Sbuf, 65536 + (i % 4) * 2048, 512);
    ev.srcs = {tile(isa::Space::Psum, (i % 4) * 2048, 512)};
    ev.waits.push_back({0, i + 1});
    if (i >= 4) ev.waits.push_back({2, i - 3});  // Scalar has read this buffer
    ev.signals.push_back({1, isa::SignalAt::Complete, 1});
    p.instructions.push_back(ev);

    isa::Instruction act;
    act.opcode = isa::Opcode::Activation;
    act.engine = isa::Engine::Scalar;
    act.dst = tile(isa::Space::Sbuf, 131072 + (i % 4) * 2048, 512);
    act.srcs = {tile(isa::Space::Sbuf, 65536 + (i % 4) * 2048, 512)};
    act.waits.push_back({1, i + 1});
    if (i >= 67) act.waits.push_back({4, (i - 3) / 64});  // DMAs that read this buffer are done
    act.signals.push_back({2, isa::SignalAt::Complete, 1});
    p.instructions.push_back(act);

    isa::Instruction ms;
    ms.opcode = isa::Opcode::Memset;
    ms.engine = isa::Engine::GpSimd;
    ms.dst = tile(isa::Space::Sbuf, 196608, 256);
    p.instructions.push_back(ms);

    if (i % 64 == 63) {
      isa::Instruction d;
      d.opcode = isa::Opcode::DmaCopy;
      d.engine = isa::Engine::Sync;
      d.dmaQueue = 0;
      d.dst.space = isa::Space::Hbm;
      d.dst.tensor = 0;
      d.dst.partitionCount = 128;
      d.dst.partitionStep = 512;
      d.dst.dims = {{1, 512}};
      d.srcs = {tile(isa::Space::Sbuf, 131072 + (i % 4) * 2048, 512)};
      d.waits.push_back({2, i + 1});
      d.signals.push_back({4, isa::SignalAt::Complete, 1});
      p.instructions.push_back(d);
      ++dmas;
    }
  }
  return p;
}

/// Host cost of one simulate() call.
struct Measured {
  double wall = 0;
  double user = 0, sys = 0;  ///< CPU seconds
  long faults = 0;           ///< minor page faults (fresh memory the run touched)
  long switches = 0;         ///< involuntary context switches (another job took the core)
  long hugeFaults = 0;       ///< 2 MiB page faults on the machine during the run
  double steal = 0;          ///< seconds the hypervisor ran others on this VM's CPUs (all of them)
  double rssMb = 0;          ///< the process's peak RSS after the run
  sim::SimResult result;
  double cpu() const { return user + sys; }
};

rusage usageNow() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage;
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

/// The machine's total steal time in seconds (the "steal" column of /proc/stat), or 0.
double stealSeconds() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return 0;
  unsigned long long v[8] = {};
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                            &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  return n == 8 ? static_cast<double>(v[7]) / static_cast<double>(sysconf(_SC_CLK_TCK)) : 0;
}

/// A field of /proc/self/status in MB ("VmRSS:"), or -1.
double procMb(const char* file, const char* field) {
  std::FILE* f = std::fopen(file, "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, len) == 0) kb = std::atof(line + len);
  std::fclose(f);
  return kb < 0 ? -1 : kb / 1024.0;
}

/// A counter of /proc/vmstat ("thp_fault_alloc"), or -1. Machine-wide: other jobs add to it.
long vmstat(const char* name) {
  std::FILE* f = std::fopen("/proc/vmstat", "r");
  if (!f) return -1;
  char key[64];
  long value = 0, found = -1;
  while (std::fscanf(f, "%63s %ld", key, &value) == 2)
    if (std::strcmp(key, name) == 0) found = value;
  std::fclose(f);
  return found;
}

Measured runOnce(const isa::Program& program, const sim::MachineConfig& machine, bool races) {
  sim::SimOptions options;
  options.timingOnly = true;
  options.detectRaces = races;
  const rusage before = usageNow();
  const double steal0 = stealSeconds();
  const long huge0 = vmstat("thp_fault_alloc");
  const auto t0 = std::chrono::steady_clock::now();
  Measured m;
  m.result = sim::simulate(program, machine, nullptr, options);
  m.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const rusage after = usageNow();
  m.steal = stealSeconds() - steal0;
  m.hugeFaults = vmstat("thp_fault_alloc") - huge0;
  m.user = seconds(after.ru_utime) - seconds(before.ru_utime);
  m.sys = seconds(after.ru_stime) - seconds(before.ru_stime);
  m.faults = after.ru_minflt - before.ru_minflt;
  m.switches = after.ru_nivcsw - before.ru_nivcsw;
  m.rssMb = static_cast<double>(after.ru_maxrss) / 1024.0;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One mode's runs, each on a line (the first pays for fresh memory, as a `neuronsim run`
/// does, and its peak RSS is this mode's own: timing-only runs first), then the minimum,
/// median and maximum speed in M simulated instructions per CPU-second.
void report(const char* mode, const std::vector<Measured>& runs) {
  const double n = static_cast<double>(runs.front().result.totals.instructions);
  std::vector<double> speed;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Measured& m = runs[i];
    speed.push_back(n / m.cpu() / 1e6);
    std::printf(
        "%-20s run %zu: %.2f M per cpu-second (%.3f s user, %.3f s sys, %.3f s wall), %ld page "
        "faults (%ld of 2 MiB), %ld involuntary switches, %.2f s machine steal; peak RSS %.0f MB\n",
        i == 0 ? mode : "", i + 1, speed.back(), m.user, m.sys, m.wall, m.faults, m.hugeFaults,
        m.switches, m.steal, m.rssMb);
  }
  const double lo = *std::min_element(speed.begin(), speed.end());
  const double hi = *std::max_element(speed.begin(), speed.end());
  std::printf("%-20s M instr per cpu-second over %zu runs: min %.2f, median %.2f, max %.2f\n", "",
              runs.size(), lo, median(speed), hi);
}

constexpr const char* kUsage =
    "usage: bench_sim_speed [steps (300000)] [machine (trn2)] [all|timing|races] [repeats (5)]";

[[noreturn]] void usageError(const std::string& why) {
  std::fprintf(stderr, "bench_sim_speed: %s\n%s\n", why.c_str(), kUsage);
  std::exit(2);
}

/// A whole number in [1, max], or a usage error naming `what`.
int64_t countArg(const char* text, const char* what, int64_t max) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v <= 0 || v > max)
    usageError(fmt::format("{} '{}' is not a whole number from 1 to {}", what, text, max));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 5) usageError("too many arguments");
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] == '-') usageError(fmt::format("unknown option '{}'", argv[i]));
  // About 3 KB of program per step: 2M steps is a 6 GB program.
  const int64_t steps = argc > 1 ? countArg(argv[1], "steps", 2000000) : 300000;
  const std::string modes = argc > 3 ? argv[3] : "all";
  if (modes != "all" && modes != "timing" && modes != "races")
    usageError(fmt::format("mode '{}' is not all, timing or races", modes));
  const int64_t repeats = argc > 4 ? countArg(argv[4], "repeats", 1000) : 5;
  sim::MachineConfig machine;
  try {
    machine = sim::loadMachine(argc > 2 ? argv[2] : "trn2");
  } catch (const std::exception& e) {
    usageError(e.what());
  }
  const double rss0 = procMb("/proc/self/status", "VmRSS:");
  const rusage built0 = usageNow();
  const long huge0 = vmstat("thp_fault_alloc");
  const auto b0 = std::chrono::steady_clock::now();
  const isa::Program program = buildProgram(steps);
  const double buildWall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
  const rusage built = usageNow();
  const long hugeBuilt = vmstat("thp_fault_alloc") - huge0;
  const double rss1 = procMb("/proc/self/status", "VmRSS:");
  const double n = static_cast<double>(program.instructions.size());
  const double hugeMb = procMb("/proc/self/smaps_rollup", "AnonHugePages:");
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool hugeMalloc = tunables && std::strstr(tunables, "glibc.malloc.hugetlb=1");
  std::printf(
      "program: %zu instructions (isa::Instruction %zu bytes), %.0f bytes each resident; built in "
      "%.2f s wall (%.2f s user, %.2f s sys, %ld page faults, %ld of 2 MiB); peak RSS %.0f MB\n",
      program.instructions.size(), sizeof(isa::Instruction), (rss1 - rss0) * 1048576.0 / n,
      buildWall, seconds(built.ru_utime) - seconds(built0.ru_utime),
      seconds(built.ru_stime) - seconds(built0.ru_stime), built.ru_minflt - built0.ru_minflt,
      hugeBuilt, built.ru_maxrss / 1024.0);
  std::printf(
      "on 2 MiB pages: %.0f of %.0f MB resident (the program's instructions and pooled "
      "blocks; malloc's own blocks %s)\n",
      hugeMb, rss1, hugeMalloc ? "too, GLIBC_TUNABLES=glibc.malloc.hugetlb=1" : "on 4 KiB pages");
  const bool timing = modes != "races", races = modes != "timing";
  // The modes alternate, so that a change of load on the host hits both alike.
  std::vector<Measured> timed, raced;
  std::vector<double> ratios;
  for (int64_t r = 0; r < repeats; ++r) {
    if (timing) timed.push_back(runOnce(program, machine, false));
    if (races) raced.push_back(runOnce(program, machine, true));
    if (timing && races && timed.back().cpu() > 0)
      ratios.push_back(raced.back().cpu() / timed.back().cpu());
  }
  const Measured& any = timing ? timed.front() : raced.front();
  std::printf("simulated: %.1f us\n", any.result.totals.total.ns() / 1000.0);
  if (timing) report("timing-only:", timed);
  if (races) {
    report("with race detection:", raced);
    if (!raced.front().result.races.empty())
      std::printf("races: %zu (expected none)\n", raced.front().result.races.size());
  }
  if (!ratios.empty())
    std::printf("race detection costs %.2fx cpu (median of %zu alternating pairs; %.2f-%.2fx)\n",
                median(ratios), ratios.size(), *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()));
  return 0;
}
