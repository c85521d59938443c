#pragma once
// Small builders of hand-written programs for the timed-model tests.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "tests/isa/operand_builders.h"

/// Ticks print as picoseconds in failed checks.
template <>
struct doctest::StringMaker<neuronsim::traces::Tick> {
  static doctest::String convert(neuronsim::traces::Tick t) {
    return fmt::format("{} ps", t.ps()).c_str();
  }
};

namespace neuronsim::simtest {

using isa::AccessPattern;
using isa::Dtype;
using isa::Engine;
using isa::Instruction;
using isa::Opcode;
using isa::Space;

/// An on-chip operand: partitions [p0, p0+parts), `free` elements at byte `offset`, step `step`.
inline AccessPattern onChip(Space space, int32_t p0, int32_t parts, int64_t offset, int64_t free,
                            Dtype dtype = Dtype::Fp32, int64_t step = 1) {
  AccessPattern ap;
  ap.space = space;
  ap.dtype = dtype;
  ap.partitionStart = p0;
  ap.partitionCount = parts;
  ap.offset = offset;
  ap.dims = {{step, free}};
  return ap;
}
inline AccessPattern sbuf(int32_t p0, int32_t parts, int64_t offset, int64_t free,
                          Dtype dtype = Dtype::Fp32, int64_t step = 1) {
  return onChip(Space::Sbuf, p0, parts, offset, free, dtype, step);
}
inline AccessPattern psum(int32_t p0, int32_t parts, int64_t offset, int64_t free,
                          Dtype dtype = Dtype::Fp32) {
  return onChip(Space::Psum, p0, parts, offset, free, dtype);
}
/// HBM rows x cols of tensor `tensor` starting at element `offset`, rows `cols` apart.
inline AccessPattern hbm(int32_t tensor, int32_t rows, int64_t cols, Dtype dtype = Dtype::Fp32,
                         int64_t offset = 0) {
  AccessPattern ap;
  ap.space = Space::Hbm;
  ap.dtype = dtype;
  ap.tensor = tensor;
  ap.partitionCount = rows;
  ap.partitionStep = cols;
  ap.offset = offset;
  ap.dims = {{1, cols}};
  return ap;
}

using isa::test::make;
inline Instruction copy(Engine engine, AccessPattern dst, AccessPattern src) {
  return make(Opcode::TensorCopy, engine, std::move(dst), {std::move(src)});
}
inline Instruction matmul(AccessPattern dst, AccessPattern stationary, AccessPattern moving) {
  return make(Opcode::NcMatmul, Engine::Tensor, std::move(dst),
              {std::move(stationary), std::move(moving)});
}
inline Instruction dma(int32_t queue, Engine trigger, AccessPattern dst, AccessPattern src) {
  Instruction inst = make(Opcode::DmaCopy, trigger, std::move(dst), {std::move(src)});
  inst.dmaQueue = queue;
  return inst;
}
inline Instruction& signal(Instruction& inst, int32_t sem, int64_t delta = 1,
                           isa::SignalAt at = isa::SignalAt::Complete) {
  inst.signals.push_back({sem, at, delta});
  return inst;
}
inline Instruction& waitFor(Instruction& inst, int32_t sem, int64_t value) {
  inst.waits.push_back({sem, value});
  return inst;
}

inline int32_t addSemaphore(isa::Program& p, const std::string& name) {
  p.semaphores.push_back(name);
  return static_cast<int32_t>(p.semaphores.size() - 1);
}
inline int32_t addTensor(isa::Program& p, const std::string& name, std::vector<int64_t> shape,
                         Dtype dtype = Dtype::Fp32, isa::TensorKind kind = isa::TensorKind::Input) {
  p.tensors.push_back({name, std::move(shape), dtype, kind});
  return static_cast<int32_t>(p.tensors.size() - 1);
}

/// ns from an engine's semaphore update to a waiter on another engine seeing it.
inline double handoffNs(const sim::MachineConfig& m) {
  return static_cast<double>(m.semaphoreHandoffCycles) / m.syncGhz;
}

inline sim::SimResult runTiming(const isa::Program& p, const sim::MachineConfig& m,
                                traces::EventSink* sink = nullptr) {
  sim::SimOptions o;
  o.timingOnly = true;
  o.sink = sink;
  return sim::simulate(p, m, nullptr, o);
}

}  // namespace neuronsim::simtest
