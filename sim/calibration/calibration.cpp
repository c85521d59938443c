// The microbenchmark cases: each builds a small program, simulates it and extracts one number.
#include "sim/calibration/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "isa/error.h"
#include "isa/program.h"
#include "sim/simulator.h"

namespace neuronsim::sim {
namespace {

using isa::AccessPattern;
using isa::Dtype;
using isa::Engine;
using isa::Instruction;
using isa::Opcode;
using isa::Space;

AccessPattern onChip(Space space, int32_t parts, int64_t offset, int64_t free, Dtype dtype) {
  AccessPattern ap;
  ap.space = space;
  ap.dtype = dtype;
  ap.partitionCount = parts;
  ap.offset = offset;
  ap.dims = {{1, free}};
  return ap;
}

/// Rows [firstRow, firstRow + rows) of a [*, cols] HBM tensor.
AccessPattern hbmRows(int32_t tensor, int64_t firstRow, int32_t rows, int64_t cols, Dtype dtype) {
  AccessPattern ap;
  ap.space = Space::Hbm;
  ap.tensor = tensor;
  ap.dtype = dtype;
  ap.partitionCount = rows;
  ap.partitionStep = cols;
  ap.offset = firstRow * cols;
  ap.dims = {{1, cols}};
  return ap;
}

Instruction dmaLoad(Engine trigger, AccessPattern src, int32_t rows, int64_t cols) {
  Instruction d;
  d.opcode = Opcode::DmaCopy;
  d.engine = trigger;
  d.dmaQueue = 0;
  d.dst = onChip(Space::Sbuf, rows, 0, cols, src.dtype);
  d.srcs = {std::move(src)};
  return d;
}

traces::EventLog run(const isa::Program& program, const MachineConfig& machine) {
  traces::EventLog log;
  SimOptions options;
  options.timingOnly = true;
  options.detectRaces = false;
  options.sink = &log;
  simulate(program, machine, nullptr, options);
  return log;
}

/// Data span (first byte to landing) of one [rows, cols] bf16 HBM->SBUF copy.
double dmaSpanNs(const MachineConfig& machine, Engine trigger, int32_t rows, int64_t cols) {
  isa::Program p;
  p.tensors.push_back({"x", {rows, cols}, Dtype::Bf16, isa::TensorKind::Input});
  p.instructions.push_back(dmaLoad(trigger, hbmRows(0, 0, rows, cols, Dtype::Bf16), rows, cols));
  const traces::EventLog log = run(p, machine);
  return log.dmas.at(0).end.ns() - log.dmas.at(0).start.ns();
}

/// Steady-state DMA efficiency (% of dma_engines x dma_engine_bytes_per_ns) of a stream of
/// back-to-back [128, bytesPerPartition] HBM->SBUF copies on one queue, triggered by Sync:
/// bytes landed per ns between the 8th and the last landing.
double streamEfficiencyPercent(const MachineConfig& machine, int64_t bytesPerPartition) {
  constexpr int kCount = 24, kSkip = 7;
  const int32_t rows = machine.geometry.partitions;
  const int64_t cols = bytesPerPartition / 2;
  isa::Program p;
  p.tensors.push_back({"x", {kCount * rows, cols}, Dtype::Bf16, isa::TensorKind::Input});
  for (int i = 0; i < kCount; ++i)
    p.instructions.push_back(
        dmaLoad(Engine::Sync, hbmRows(0, int64_t{i} * rows, rows, cols, Dtype::Bf16), rows, cols));
  const traces::EventLog log = run(p, machine);
  std::map<int64_t, double> landed;
  for (const traces::DmaEvent& e : log.dmas) landed[e.index] = e.end.ns();
  const double bytes = static_cast<double>(kCount - 1 - kSkip) * rows * bytesPerPartition;
  const double ns = landed.at(kCount - 1) - landed.at(kSkip);
  const double peak = machine.geometry.dmaEngines * machine.dmaEngineBytesPerNs;
  return 100.0 * bytes / ns / peak;
}

double dependentActivationGapNs(const MachineConfig& machine) {
  isa::Program p;
  for (int i = 0; i < 8; ++i) {
    Instruction a;
    a.opcode = Opcode::Activation;
    a.engine = Engine::Scalar;
    a.act = isa::ActFn::Exp;
    a.srcs = {onChip(Space::Sbuf, 1, 64 * i, 1, Dtype::Fp32)};
    a.dst = onChip(Space::Sbuf, 1, 64 * (i + 1), 1, Dtype::Fp32);
    p.instructions.push_back(a);
  }
  const traces::EventLog log = run(p, machine);
  return (log.instructions.back().start.ns() - log.instructions.front().start.ns()) / 7;
}

/// One published figure (or range) and how to measure it.
struct Case {
  const char* name;
  const char* machine;
  CalibrationRole role;
  double low, high;
  std::function<double(const MachineConfig&)> measure;
};

std::function<double(const MachineConfig&)> streamAt(int64_t bytesPerPartition) {
  return [=](const MachineConfig& m) { return streamEfficiencyPercent(m, bytesPerPartition); };
}

std::vector<Case> cases() {
  constexpr CalibrationRole kFit = CalibrationRole::Fit, kCheck = CalibrationRole::Check;
  return {
      {"P1: one-queue stream of 4 KiB-per-partition loads (its [128, 1024] fp32 example, 32 KiB "
       "per engine), DMA efficiency (%)",
       "trn1", kFit, 85, 85, streamAt(4096)},
      {"D1+P1: one-queue stream of 4 KiB-per-partition loads, DMA efficiency (%; 'nearly "
       "saturates', read as P1's 85%)",
       "trn2", kFit, 85, 85, streamAt(4096)},
      {"D1: [4, 4096] bf16 HBM->SBUF, 32 KiB on one engine, transfer span (ns)", "trn2", kCheck,
       1416, 1416, [](const MachineConfig& m) { return dmaSpanNs(m, Engine::Sync, 4, 4096); }},
      {"D1: [128, 128] bf16 HBM->SBUF from GpSimd, 2 KiB per engine, transfer span (ns; profile "
       "figure as read in issue 8)",
       "trn2", kCheck, 97, 97,
       [](const MachineConfig& m) { return dmaSpanNs(m, Engine::GpSimd, 128, 128); }},
      {"D2: 64 B per partition stream, DMA efficiency (%; 'small fraction of peak' read as <= 25)",
       "trn2", kCheck, 0, 25, streamAt(64)},
      {"D2: 1 KiB per partition stream, DMA efficiency (%; 'improving but below peak' read as "
       "25-75)",
       "trn2", kCheck, 25, 75, streamAt(1024)},
      {"D2: 2 KiB per partition stream, DMA efficiency (%; 'approaches peak' read as >= 75)",
       "trn2", kCheck, 75, 100, streamAt(2048)},
      {"A1: dependent 1-element ScalarE activations, issue gap (ns)", "trn1", kCheck, 189, 189,
       dependentActivationGapNs},
  };
}

}  // namespace

const char* roleName(CalibrationRole role) {
  return role == CalibrationRole::Fit ? "fit" : "check";
}

double CalibrationResult::errorPercent() const {
  if (simulated < low) return low != 0 ? 100.0 * (simulated - low) / low : 0;
  if (simulated > high) return high != 0 ? 100.0 * (simulated - high) / high : 0;
  return 0;
}

std::string CalibrationResult::publishedText() const {
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  return low == high ? text(low) : fmt::format("{}-{}", text(low), text(high));
}

std::vector<CalibrationResult> runCalibration(const std::string& machineFilter,
                                              const std::vector<std::string>& overrides) {
  if (!machineFilter.empty() && machineFilter != "trn2" && machineFilter != "trn1")
    throw Error(fmt::format("calibrate: no published measurements for machine '{}' (trn2, trn1)",
                            machineFilter));
  std::vector<CalibrationResult> results;
  for (const Case& c : cases()) {
    if (!machineFilter.empty() && machineFilter != c.machine) continue;
    const MachineConfig machine = loadMachine(c.machine, overrides);
    results.push_back({c.name, c.machine, c.role, c.low, c.high, c.measure(machine)});
  }
  return results;
}

double maxErrorPercent(const std::vector<CalibrationResult>& results, CalibrationRole role,
                       const std::string& machine) {
  double worst = 0;
  for (const CalibrationResult& r : results)
    if (r.role == role && (machine.empty() || r.machine == machine))
      worst = std::max(worst, std::fabs(r.errorPercent()));
  return worst;
}

}  // namespace neuronsim::sim
