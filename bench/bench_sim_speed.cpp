// Simulator speed: simulated instructions per second of host time, timing-only mode.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
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
  double cpu = 0;
  long faults = 0;   ///< minor page faults (fresh memory the run touched)
  double rssMb = 0;  ///< the process's peak RSS after the run
  sim::SimResult result;
};

rusage usageNow() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage;
}

Measured runOnce(const isa::Program& program, const sim::MachineConfig& machine, bool races) {
  sim::SimOptions options;
  options.timingOnly = true;
  options.detectRaces = races;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  const long faults0 = usageNow().ru_minflt;
  Measured m;
  m.result = sim::simulate(program, machine, nullptr, options);
  m.cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  m.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const rusage after = usageNow();
  m.faults = after.ru_minflt - faults0;
  m.rssMb = static_cast<double>(after.ru_maxrss) / 1024.0;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One mode's runs: the first (which pays for fresh memory, as a `neuronsim run` does, and
/// whose peak RSS is this mode's own: timing-only runs first), then the minimum and median CPU
/// over all of them, in M simulated instructions per CPU-second.
void report(const char* mode, const std::vector<Measured>& runs) {
  const double n = static_cast<double>(runs.front().result.totals.instructions);
  std::vector<double> cpu;
  for (const Measured& m : runs) cpu.push_back(m.cpu);
  const Measured& first = runs.front();
  std::printf(
      "%-20s first run %.3f s wall, %.3f s cpu (%.2f M per cpu-second), %ld page faults, "
      "peak RSS %.0f MB\n",
      mode, first.wall, first.cpu, n / first.cpu / 1e6, first.faults, first.rssMb);
  std::printf("%-20s %zu runs: cpu min %.3f s (%.2f M per cpu-second), median %.3f s (%.2f M)\n",
              "", runs.size(), *std::min_element(cpu.begin(), cpu.end()),
              n / *std::min_element(cpu.begin(), cpu.end()) / 1e6, median(cpu),
              n / median(cpu) / 1e6);
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
  const isa::Program program = buildProgram(steps);
  std::printf("program: %zu instructions; peak RSS after building it %.0f MB\n",
              program.instructions.size(), usageNow().ru_maxrss / 1024.0);
  const bool timing = modes != "races", races = modes != "timing";
  // The modes alternate, so that a change of load on the host hits both alike.
  std::vector<Measured> timed, raced;
  std::vector<double> ratios;
  for (int64_t r = 0; r < repeats; ++r) {
    if (timing) timed.push_back(runOnce(program, machine, false));
    if (races) raced.push_back(runOnce(program, machine, true));
    if (timing && races && timed.back().cpu > 0)
      ratios.push_back(raced.back().cpu / timed.back().cpu);
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
