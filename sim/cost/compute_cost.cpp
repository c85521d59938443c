// The compute-engine cost formulas, one function per engine family.
#include "sim/cost/compute_cost.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "isa/operands.h"

namespace neuronsim::sim {
namespace {

using isa::AluOp;
using isa::Dtype;
using isa::Opcode;
using isa::Space;

/// An instruction with its operands' shapes in slot order: dst, then srcs.
struct Shaped {
  const isa::Instruction& inst;
  std::span<const OperandShape> shapes;
  const OperandShape& dst() const { return shapes[0]; }
  const OperandShape& src(size_t i) const { return shapes[1 + i]; }
  /// Elements per partition it processes: srcs[0]'s free size, else dst's.
  int64_t elementsPerPartition() const {
    return inst.srcs.empty() ? dst().freeSize : src(0).freeSize;
  }
};

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
bool isStrided(std::span<const OperandShape> shapes, const MachineConfig& machine) {
  for (const OperandShape& s : shapes)
    if (s.onChip && s.strideBytes > machine.strideThresholdBytes) return true;
  return false;
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

/// dst and every src walk their innermost dim with step 1.
bool allContiguous(const Shaped& op) {
  for (size_t i = 0; i <= op.inst.srcs.size(); ++i)
    if (!op.shapes[i].contiguous) return false;
  return true;
}

/// The element-proportional work of one Vector/Scalar/GpSimd instruction, in cycles before
/// MIN_II and GPSIMD_START (I2 table, A2 performance modes).
double elementWork(const Shaped& op, const MachineConfig& machine) {
  const isa::Instruction& inst = op.inst;
  const int64_t ni = op.elementsPerPartition();
  const double n = static_cast<double>(ni);
  const bool vector = inst.engine == isa::Engine::Vector;
  const bool perf = vector && machine.geometry.vectorPerfMode && perfModeEligible(inst);
  switch (inst.opcode) {
    case Opcode::TensorCopy:
    case Opcode::TensorScalar:
      if (perf) return n / (allContiguous(op) ? 4.0 : 2.0);  // A2: 4x contiguous, 2x otherwise
      return n;                                              // I2: N
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
      const bool bf16Fast = !machine.geometry.vectorPerfMode && a.dtype == Dtype::Bf16 &&
                            b.dtype == Dtype::Bf16 && inst.dst.dtype == Dtype::Bf16 &&
                            a.space == Space::Sbuf && b.space == Space::Sbuf &&
                            inst.dst.space == Space::Sbuf && addMulSub && allContiguous(op);
      if (vector && (psumSbufMix || bf16Fast)) return n;  // I2
      if (perf) return n;                                 // A2: 2N halved by the performance mode
      return 2 * n;                                       // I2
    }
    case Opcode::ScalarTensorTensor: {
      const bool bf16 =
          inst.dst.dtype == Dtype::Bf16 && !inst.srcs.empty() && inst.srcs[0].dtype == Dtype::Bf16;
      const bool subMul = inst.op0 == AluOp::Subtract && inst.op1 == AluOp::Multiply;
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
      const double dn = static_cast<double>(op.dst().freeSize);
      return inst.value == 0.0f && isSixteenBitFloat(inst.dst.dtype) ? dn / 2 : dn;  // I2
    }
    case Opcode::NcMatmul:
    case Opcode::DmaCopy:
    case Opcode::DmaTranspose:
      return n;
  }
  return n;
}

/// An SBUF read whose innermost stride exceeds the threshold streams at half rate (A1).
double readSlowdown(const OperandShape& shape, const MachineConfig& machine) {
  return shape.strideBytes > machine.strideThresholdBytes ? machine.stridedSlowdown : 1.0;
}

/// TensorE MultiplyMoving II (I2).
Cycles matmulCycles(const Shaped& op, const MachineConfig& machine) {
  const int64_t m = op.src(0).freeSize;
  const OperandShape& moving = op.src(1);
  const int64_t n =
      ceilQuotient(static_cast<double>(moving.freeSize) * readSlowdown(moving, machine), 1);
  const int64_t base = std::max(std::min(machine.geometry.matmulMinCycles, m), n);
  return {anyFp32(op.inst)
              ? ceilQuotient(static_cast<double>(base) * machine.geometry.fp32MatmulFactor, 1)
              : base};
}

/// nc_matmul LoadStationary (P1).
Cycles loadStationaryCycles(const Shaped& op, const MachineConfig& machine) {
  const OperandShape& stationary = op.src(0);
  const bool fp32 = anyFp32(op.inst);
  const double columns =
      static_cast<double>(stationary.freeSize) * readSlowdown(stationary, machine);
  return {fp32 ? ceilQuotient(columns * machine.geometry.fp32MatmulFactor,
                              machine.geometry.lsSpeedupFp32)
               : ceilQuotient(columns, machine.geometry.lsSpeedup)};
}

/// TensorE transpose (I2).
Cycles tensorTransposeCycles(const Shaped& op, const MachineConfig& machine) {
  const isa::AccessPattern& data = op.inst.srcs[0];
  const int64_t p = data.partitionCount;
  const int64_t f = op.src(0).freeSize;
  const int64_t base = std::max(p, std::min(machine.geometry.matmulMinCycles, f));
  return {data.dtype == Dtype::Fp32
              ? ceilQuotient(static_cast<double>(base) * machine.fp32TransposeFactor, 1)
              : base};
}

/// Vector/Scalar/GpSimd issue cycles (I2).
Cycles vectorLikeCycles(const Shaped& op, const MachineConfig& machine) {
  const isa::Instruction& inst = op.inst;
  double work = elementWork(op, machine);
  if (isStrided(op.shapes, machine)) work *= machine.stridedSlowdown;
  const int64_t w = static_cast<int64_t>(std::ceil(work));
  if (inst.engine == isa::Engine::GpSimd) return {machine.geometry.gpsimdStartCycles + w};
  int64_t cycles = std::max(machine.geometry.minIiCycles, w);
  if (inst.opcode == Opcode::Activation && inst.reduceDst)
    cycles += machine.geometry.minIiCycles;  // ActReadAccumulator
  return {cycles};
}

}  // namespace

Cycles pipelineLatency(isa::Engine engine, const MachineConfig& machine) {
  switch (engine) {
    case isa::Engine::Tensor:
      return {machine.geometry.matmulMinCycles};
    case isa::Engine::Vector:
    case isa::Engine::Scalar:
    case isa::Engine::GpSimd:
      return {machine.staticOverheadCycles + 2 * machine.accessOverheadCycles};
    case isa::Engine::Sync:
      return {0};
  }
  return {0};
}

ComputeCost computeCost(const isa::Instruction& inst, std::span<const OperandShape> shapes,
                        const MachineConfig& machine) {
  const Shaped op{inst, shapes};
  ComputeCost cost;
  if (inst.opcode == Opcode::NcMatmul) {
    inst.srcs.at(0);  // the stationary, then the moving
    inst.srcs.at(1);
    cost.issue = matmulCycles(op, machine);
    cost.loadStationary = loadStationaryCycles(op, machine);
    const int64_t k = inst.srcs[0].partitionCount;
    cost.flops = 2 * k * op.src(0).freeSize * op.src(1).freeSize;
  } else if (inst.opcode == Opcode::NcTranspose && inst.engine == isa::Engine::Tensor) {
    const isa::AccessPattern& data = inst.srcs.at(0);
    cost.issue = tensorTransposeCycles(op, machine);
    const int64_t f = op.src(0).freeSize;
    const double factor = data.dtype == Dtype::Fp32 ? machine.geometry.fp32MatmulFactor : 1.0;
    cost.loadStationary = {
        ceilQuotient(static_cast<double>(f) * factor, machine.geometry.lsSpeedup)};
    cost.transposeFlops = 2 * static_cast<int64_t>(data.partitionCount) * data.partitionCount * f;
  } else {
    cost.issue = vectorLikeCycles(op, machine);
  }
  return cost;
}

ComputeCost computeCost(const isa::Instruction& inst, const MachineConfig& machine) {
  std::vector<OperandShape> shapes;
  isa::forEachOperand(
      inst, [&](const isa::AccessPattern& ap, int, bool) { shapes.push_back(shapeOf(ap)); });
  return computeCost(inst, shapes, machine);
}

}  // namespace neuronsim::sim
