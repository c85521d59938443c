// The calibration cases: each builds a small program, simulates it and extracts one number.
#include "sim/calibration/calibration.h"

#include <algorithm>
#include <functional>

#include "isa/error.h"
#include "isa/program.h"
#include "sim/core/text.h"
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

AccessPattern hbmRows(int32_t tensor, int32_t rows, int64_t cols) {
  AccessPattern ap;
  ap.space = Space::Hbm;
  ap.tensor = tensor;
  ap.partitionCount = rows;
  ap.partitionStep = cols;
  ap.dims = {{1, cols}};
  return ap;
}

Instruction dmaLoad(int32_t tensor, int32_t rows, int64_t cols) {
  Instruction d;
  d.opcode = Opcode::DmaCopy;
  d.engine = Engine::Sync;
  d.dmaQueue = 0;
  d.dst = onChip(Space::Sbuf, rows, 0, cols, Dtype::Fp32);
  d.srcs = {hbmRows(tensor, rows, cols)};
  return d;
}

traces::EventLog run(const isa::Program& program, const MachineConfig& machine,
                     SimResult* result = nullptr) {
  traces::EventLog log;
  SimOptions options;
  options.timingOnly = true;
  options.sink = &log;
  SimResult r = simulate(program, machine, nullptr, options);
  if (result) *result = r;
  return log;
}

/// A stream of `count` identical matmuls (stationary [128, m], moving [128, n]).
isa::Program matmulStream(int count, int64_t m, int64_t n, Dtype dtype) {
  isa::Program p;
  for (int i = 0; i < count; ++i) {
    Instruction mm;
    mm.opcode = Opcode::NcMatmul;
    mm.engine = Engine::Tensor;
    mm.dst = onChip(Space::Psum, static_cast<int32_t>(m), (i % 4) * 2048, n, Dtype::Fp32);
    mm.srcs = {onChip(Space::Sbuf, 128, 0, m, dtype), onChip(Space::Sbuf, 128, 65536, n, dtype)};
    p.instructions.push_back(mm);
  }
  return p;
}

/// PE cycles per matmul in the steady state: the last 32 gaps of a stream long enough
/// (> 3 us) to leave the Trn2 throttle ramp.
double steadyCyclesPerMatmul(const MachineConfig& machine, int64_t m, int64_t n) {
  const traces::EventLog log = run(matmulStream(256, m, n, Dtype::Bf16), machine);
  const double span =
      log.instructions.back().start.ns() - log.instructions[log.instructions.size() - 33].start.ns();
  return span / 32 * machine.peGhz;
}

double dmaTransferNs(const MachineConfig& machine, int32_t rows, int64_t cols) {
  isa::Program p;
  p.tensors.push_back({"x", {rows, cols}, Dtype::Fp32, isa::TensorKind::Input});
  p.instructions.push_back(dmaLoad(0, rows, cols));
  const traces::EventLog log = run(p, machine);
  return log.dmas.at(0).end.ns() - log.dmas.at(0).start.ns();
}

double largeDmaGbps(const MachineConfig& machine) {
  const int32_t rows = 128;
  const int64_t cols = 8192;  // 32 KiB per partition, 4 MiB in all
  return static_cast<double>(rows * cols * 4) / dmaTransferNs(machine, rows, cols);
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

double semaphoreToStartNs(const MachineConfig& machine) {
  isa::Program p;
  p.tensors.push_back({"x", {1, 16}, Dtype::Fp32, isa::TensorKind::Input});
  p.semaphores = {"ready"};
  Instruction gate;
  gate.opcode = Opcode::Memset;
  gate.engine = Engine::Vector;
  gate.dst = onChip(Space::Sbuf, 1, 4096, 64, Dtype::Fp32);
  gate.signals.push_back({0, isa::SignalAt::Complete, 1});
  p.instructions.push_back(gate);
  Instruction d = dmaLoad(0, 1, 16);
  d.waits.push_back({0, 1});
  p.instructions.push_back(d);
  const traces::EventLog log = run(p, machine);
  const traces::InstructionEvent& trigger =
      log.instructions[0].index == 1 ? log.instructions[0] : log.instructions[1];
  return log.dmas.at(0).start.ns() - trigger.start.ns();
}

double streamUtilizationPercent(const MachineConfig& machine) {
  SimResult r;
  const traces::EventLog log = run(matmulStream(512, 128, 512, Dtype::Bf16), machine, &r);
  const double span = log.instructions.back().end.ns() - log.instructions.front().start.ns();
  return 100.0 * static_cast<double>(r.totals.flops) / (machine.peakBf16Flops() * 1e-9 * span);
}

double fp32Ratio(const MachineConfig& machine) {
  const traces::EventLog bf = run(matmulStream(64, 128, 512, Dtype::Bf16), machine);
  const traces::EventLog fp = run(matmulStream(64, 128, 512, Dtype::Fp32), machine);
  auto span = [](const traces::EventLog& l) {
    return l.instructions.back().end.ns() - l.instructions[32].start.ns();
  };
  return span(fp) / span(bf);
}

/// One published figure and how to measure it.
struct Case {
  const char* name;
  const char* machine;
  double published;
  std::function<double(const MachineConfig&)> measure;
};

std::vector<Case> cases() {
  return {
      {"D1: 32 KiB DMA on one engine, transfer time (ns)", "trn2", 1416,
       [](const MachineConfig& m) { return dmaTransferNs(m, 1, 8192); }},
      {"A1: dependent 1-element ScalarE activations, issue gap (ns)", "trn1", 189,
       dependentActivationGapNs},
      {"D2: DMA semaphore-to-start latency (ns)", "trn2", 1300, semaphoreToStartNs},
      {"D1/D2: large HBM->SBUF DMA, 16 engines (GB/s)", "trn1", 272, largeDmaGbps},
      {"D1/D2: large HBM->SBUF DMA, 16 engines (GB/s)", "trn2", 368, largeDmaGbps},
      {"P1: steady 128x128x512 bf16 matmul stream, PE utilization (%)", "trn2", 100,
       streamUtilizationPercent},
      {"P1: steady 128x128x512 bf16 matmul stream, PE utilization (%)", "trn1", 100,
       streamUtilizationPercent},
      {"A1/I2: fp32 / bf16 matmul stream time (ratio)", "trn1", 4, fp32Ratio},
      {"P1: [1,128]x[128,128], vector as moving (PE cycles per matmul)", "trn2", 64,
       [](const MachineConfig& m) { return steadyCyclesPerMatmul(m, 128, 1); }},
      {"P1: [1,128]x[128,128], vector as stationary (PE cycles per matmul)", "trn2", 128,
       [](const MachineConfig& m) { return steadyCyclesPerMatmul(m, 1, 128); }},
  };
}

}  // namespace

std::vector<CalibrationResult> runCalibration(const std::string& machineFilter,
                                              const std::vector<std::string>& overrides) {
  std::vector<CalibrationResult> results;
  bool matched = false;
  for (const Case& c : cases()) {
    if (!machineFilter.empty() && machineFilter != c.machine) continue;
    matched = true;
    const MachineConfig machine = loadMachine(c.machine, overrides);
    results.push_back({c.name, c.machine, c.published, c.measure(machine)});
  }
  if (!matched)
    throw Error(concat("calibrate: no published measurements for machine '", machineFilter,
                       "' (trn2, trn1)"));
  return results;
}

}  // namespace neuronsim::sim
