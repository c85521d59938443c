#pragma once
// Cost tables of the compute engines (reference 2.2-2.4), in each engine's own cycles.

#include <cstdint>
#include <span>

#include "isa/instruction.h"
#include "sim/cost/clock.h"
#include "sim/cost/operand_traits.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// What one compute instruction costs on its engine.
struct ComputeCost {
  Cycles issue;                ///< initiation interval: the engine is busy this long
  Cycles loadStationary;       ///< TensorE only: LoadStationary cycles when the stationary changes
  int64_t flops = 0;           ///< matmul flops, 2 per MAC (PE transposes excluded)
  int64_t transposeFlops = 0;  ///< PE transpose as a matmul against the identity, 2 per MAC
};

/// Pipeline latency after issue: Tensor mm_min (MM_INIT_LATENCY); Vector/Scalar/GpSimd
/// static overhead + two tensor accesses (A1); Sync 0.
Cycles pipelineLatency(isa::Engine engine, const MachineConfig& machine);
/// Full cost of a non-DMA instruction on its engine: TensorE MultiplyMoving II
/// max(min(mm_min, M), N) cycles for M stationary and N moving columns, times
/// fp32_matmul_factor with an fp32 input (I2), LoadStationary ceil(M / ls_speedup) (P1; fp32
/// ceil(M x fp32_matmul_factor / ls_speedup_fp32)); TensorE transpose max(P, min(mm_min, F)),
/// fp32 times fp32_transpose_factor (I2); Vector/Scalar/GpSimd from the I2 table on
/// `inst.engine`. `shapes`: its operands' in slot order as listOperands writes them (dst, srcs,
/// then the optional operands present). Throws std::out_of_range when TensorE lacks a source.
ComputeCost computeCost(const isa::Instruction& inst, std::span<const OperandShape> shapes,
                        const MachineConfig& machine);
/// computeCost, walking the operands' dims itself.
ComputeCost computeCost(const isa::Instruction& inst, const MachineConfig& machine);

}  // namespace neuronsim::sim
