// The compute-engine cost formulas, one function per engine family.
#include "sim/cost/compute_cost.h"

#include <algorithm>
#include <cmath>

#include "sim/cost/operand_traits.h"

namespace neuronsim::sim {
namespace {

using isa::AluOp;
using isa::Dtype;
using isa::Opcode;
using isa::Space;

bool anyFp32(const isa::Instruction& inst) {
  for (const isa::AccessPattern& s : inst.srcs)
    if (s.dtype == Dtype::Fp32) return true;
  return false;
}

/// a / b rounded up to a whole count (the machine factors are fractional).
int64_t ceilQuotient(double a, double b) {
  return static_cast<int64_t>(std::ceil(a / b));
}

bool onChip(const isa::AccessPattern& ap) {
  return ap.space != Space::Hbm;
}

/// True when some operand on chip has an innermost stride above the threshold (A1).
bool isStrided(const isa::Instruction& inst, const MachineConfig& machine) {
  bool strided = false;
  isa::forEachOperand(inst, [&](const isa::AccessPattern& ap, int, bool) {
    if (onChip(ap) && innermostStrideBytes(ap) > machine.strideThresholdBytes) strided = true;
  });
  return strided;
}

/// NC-v3 VectorE performance mode: every data operand bf16/fp16 in SBUF (A2).
bool perfModeEligible(const isa::Instruction& inst) {
  auto ok = [](const isa::AccessPattern& ap) {
    return ap.space == Space::Sbuf && isSixteenBitFloat(ap.dtype);
  };
  if (!ok(inst.dst)) return false;
  for (const isa::AccessPattern& s : inst.srcs)
    if (!ok(s)) return false;
  return true;
}

bool allContiguous(const isa::Instruction& inst) {
  if (!innermostContiguous(inst.dst)) return false;
  for (const isa::AccessPattern& s : inst.srcs)
    if (!innermostContiguous(s)) return false;
  return true;
}

/// The element-proportional work of one Vector/Scalar/GpSimd instruction, in cycles before
/// MIN_II and GPSIMD_START (I2 table, A2 performance modes).
double elementWork(const isa::Instruction& inst, const MachineConfig& machine) {
  const double n = static_cast<double>(elementsPerPartition(inst));
  const bool vector = inst.engine == isa::Engine::Vector;
  const bool perf = vector && machine.vectorPerfMode && perfModeEligible(inst);
  switch (inst.opcode) {
    case Opcode::TensorCopy:
    case Opcode::TensorScalar:
      if (perf) return n / (allContiguous(inst) ? 4.0 : 2.0);  // A2: 4x contiguous, 2x otherwise
      return n;                                                // I2: N
    case Opcode::Activation:
    case Opcode::NcTranspose:
    case Opcode::Iota:
    case Opcode::AffineSelect:
      return n;  // I2
    case Opcode::TensorTensor: {
      if (inst.srcs.size() < 2) return 2 * n;
      const isa::AccessPattern& a = inst.srcs[0];
      const isa::AccessPattern& b = inst.srcs[1];
      const bool psumSbufMix =
          (a.space == Space::Psum) != (b.space == Space::Psum) && onChip(a) && onChip(b);
      const bool addMulSub =
          inst.op0 == AluOp::Add || inst.op0 == AluOp::Subtract || inst.op0 == AluOp::Multiply;
      const bool bf16Fast = !machine.vectorPerfMode && a.dtype == Dtype::Bf16 &&
                            b.dtype == Dtype::Bf16 && inst.dst.dtype == Dtype::Bf16 &&
                            a.space == Space::Sbuf && b.space == Space::Sbuf &&
                            inst.dst.space == Space::Sbuf && addMulSub && allContiguous(inst);
      if (vector && (psumSbufMix || bf16Fast)) return n;  // I2
      if (perf) return n;                                 // A2: 2N halved by the performance mode
      return 2 * n;                                       // I2
    }
    case Opcode::ScalarTensorTensor: {
      const bool bf16 =
          inst.dst.dtype == Dtype::Bf16 && !inst.srcs.empty() && inst.srcs[0].dtype == Dtype::Bf16;
      const bool subMul = inst.op0 == AluOp::Subtract && inst.op1 == AluOp::Multiply;
      const int64_t ni = elementsPerPartition(inst);
      return bf16 && subMul && ni % 2 == 0 ? n : 2 * n;  // I2
    }
    case Opcode::TensorReduce: {
      const bool bf16 =
          inst.dst.dtype == Dtype::Bf16 && !inst.srcs.empty() && inst.srcs[0].dtype == Dtype::Bf16;
      const bool addMax = inst.op0 == AluOp::Add || inst.op0 == AluOp::Max;
      return bf16 && addMax ? n / 2 : n;  // I2
    }
    case Opcode::CopyPredicated: {
      bool allSbuf = inst.dst.space == Space::Sbuf;
      for (const isa::AccessPattern& s : inst.srcs) allSbuf = allSbuf && s.space == Space::Sbuf;
      return allSbuf ? 2 * n : n;  // I2
    }
    case Opcode::Memset: {
      const double dn = static_cast<double>(inst.dst.freeSize());
      return inst.value == 0.0f && isSixteenBitFloat(inst.dst.dtype) ? dn / 2 : dn;  // I2
    }
    case Opcode::NcMatmul:
    case Opcode::DmaCopy:
    case Opcode::DmaTranspose:
      return n;
  }
  return n;
}

}  // namespace

/// An SBUF read whose innermost stride exceeds the threshold streams at half rate (A1).
double readSlowdown(const isa::AccessPattern& ap, const MachineConfig& machine) {
  return innermostStrideBytes(ap) > machine.strideThresholdBytes ? machine.stridedSlowdown : 1.0;
}

Cycles matmulCycles(const isa::Instruction& inst, const MachineConfig& machine) {
  const int64_t m = inst.srcs.at(0).freeSize();
  const isa::AccessPattern& moving = inst.srcs.at(1);
  const int64_t n =
      ceilQuotient(static_cast<double>(moving.freeSize()) * readSlowdown(moving, machine), 1);
  const int64_t base = std::max(std::min(machine.mmMinCycles, m), n);
  return {anyFp32(inst) ? ceilQuotient(static_cast<double>(base) * machine.fp32MatmulFactor, 1)
                        : base};
}

Cycles loadStationaryCycles(const isa::Instruction& inst, const MachineConfig& machine) {
  const isa::AccessPattern& stationary = inst.srcs.at(0);
  const bool fp32 = anyFp32(inst);
  const double columns =
      static_cast<double>(stationary.freeSize()) * readSlowdown(stationary, machine);
  return {fp32 ? ceilQuotient(columns * machine.fp32MatmulFactor, machine.lsSpeedupFp32)
               : ceilQuotient(columns, machine.lsSpeedup)};
}

Cycles tensorTransposeCycles(const isa::Instruction& inst, const MachineConfig& machine) {
  const isa::AccessPattern& data = inst.srcs.at(0);
  const int64_t p = data.partitionCount;
  const int64_t f = data.freeSize();
  const int64_t base = std::max(p, std::min(machine.mmMinCycles, f));
  return {data.dtype == Dtype::Fp32
              ? ceilQuotient(static_cast<double>(base) * machine.fp32TransposeFactor, 1)
              : base};
}

Cycles vectorLikeCycles(const isa::Instruction& inst, const MachineConfig& machine) {
  double work = elementWork(inst, machine);
  if (isStrided(inst, machine)) work *= machine.stridedSlowdown;
  const int64_t w = static_cast<int64_t>(std::ceil(work));
  if (inst.engine == isa::Engine::GpSimd) return {machine.gpsimdStartCycles + w};
  int64_t cycles = std::max(machine.minIiCycles, w);
  if (inst.opcode == Opcode::Activation && inst.reduceDst)
    cycles += machine.minIiCycles;  // ActReadAccumulator
  return {cycles};
}

Cycles pipelineLatency(isa::Engine engine, const MachineConfig& machine) {
  switch (engine) {
    case isa::Engine::Tensor:
      return {machine.mmMinCycles};
    case isa::Engine::Vector:
    case isa::Engine::Scalar:
    case isa::Engine::GpSimd:
      return {machine.staticOverheadCycles + 2 * machine.accessOverheadCycles};
    case isa::Engine::Sync:
      return {0};
  }
  return {0};
}

ComputeCost computeCost(const isa::Instruction& inst, const MachineConfig& machine) {
  ComputeCost cost;
  cost.latency = pipelineLatency(inst.engine, machine);
  if (inst.opcode == Opcode::NcMatmul) {
    cost.issue = matmulCycles(inst, machine);
    cost.loadStationary = loadStationaryCycles(inst, machine);
    const int64_t k = inst.srcs[0].partitionCount;
    cost.flops = 2 * k * inst.srcs[0].freeSize() * inst.srcs[1].freeSize();
  } else if (inst.opcode == Opcode::NcTranspose && inst.engine == isa::Engine::Tensor) {
    cost.issue = tensorTransposeCycles(inst, machine);
    const isa::AccessPattern& data = inst.srcs.at(0);
    const double factor = data.dtype == Dtype::Fp32 ? machine.fp32MatmulFactor : 1.0;
    cost.loadStationary = {
        ceilQuotient(static_cast<double>(data.freeSize()) * factor, machine.lsSpeedup)};
    cost.transposeFlops =
        2 * static_cast<int64_t>(data.partitionCount) * data.partitionCount * data.freeSize();
  } else {
    cost.issue = vectorLikeCycles(inst, machine);
  }
  return cost;
}

}  // namespace neuronsim::sim
