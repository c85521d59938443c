#pragma once
// Cost tables of the compute engines (reference 2.2-2.4), in each engine's own cycles.

#include <cstdint>

#include "isa/instruction.h"
#include "sim/cost/clock.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// What one compute instruction costs on its engine.
struct ComputeCost {
  Cycles issue;                ///< initiation interval: the engine is busy this long
  Cycles latency;              ///< further cycles until results land and Complete signals fire
  Cycles loadStationary;       ///< TensorE only: LoadStationary cycles when the stationary changes
  int64_t flops = 0;           ///< matmul flops, 2 per MAC (PE transposes excluded)
  int64_t transposeFlops = 0;  ///< PE transpose as a matmul against the identity, 2 per MAC
};

/// TensorE MultiplyMoving II: max(min(mm_min, M), N) cycles, times fp32_matmul_factor when an
/// input is fp32 (I2). M = stationary free size, N = moving free size.
Cycles matmulCycles(const isa::Instruction& inst, const MachineConfig& machine);
/// nc_matmul LoadStationary: ceil(M / ls_speedup) cycles (P1); fp32:
/// ceil(M x fp32_matmul_factor / ls_speedup_fp32). A PE transpose's load keeps ls_speedup.
Cycles loadStationaryCycles(const isa::Instruction& inst, const MachineConfig& machine);
/// TensorE transpose: max(P, min(mm_min, F)) cycles (I2), fp32 times fp32_transpose_factor.
Cycles tensorTransposeCycles(const isa::Instruction& inst, const MachineConfig& machine);
/// Vector/Scalar/GpSimd issue cycles from the I2 table on `inst.engine`.
Cycles vectorLikeCycles(const isa::Instruction& inst, const MachineConfig& machine);
/// Pipeline latency after issue: Tensor mm_min (MM_INIT_LATENCY); Vector/Scalar/GpSimd
/// static overhead + two tensor accesses (A1); Sync 0.
Cycles pipelineLatency(isa::Engine engine, const MachineConfig& machine);
/// Full cost of a non-DMA instruction on its engine.
ComputeCost computeCost(const isa::Instruction& inst, const MachineConfig& machine);

}  // namespace neuronsim::sim
