#pragma once
// How one DMA instruction splits into per-engine work (D1): each DMA engine serves a
// contiguous group of partitions, each row is cut into descriptors of contiguous chunks, and
// each engine's share costs its bytes at the engine rate plus a per-transfer overhead.

#include <cstdint>
#include <vector>

#include "isa/instruction.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Femtoseconds of one DMA engine's time: the unit of DMA work (integer, so the DMA model
/// compares times exactly; 1 ps = 1000 fs).
using EngineFs = int64_t;
inline constexpr EngineFs kFsPerPs = 1000;

/// One DMA engine's share of a transfer.
struct DmaPart {
  int32_t engine = 0;
  int64_t rows = 0;      ///< partitions (or HBM rows) this engine carries
  int64_t bytes = 0;     ///< bytes it writes (destination side)
  int64_t hbmBytes = 0;  ///< bytes it reads from or writes to HBM
  /// Its share of the core's HBM bandwidth, in bytes: hbmBytes / dma_strided_hbm_efficiency
  /// when an HBM side is strided, else hbmBytes.
  int64_t hbmLoadBytes = 0;
  int64_t descriptors = 0;  ///< contiguous chunks it moves
  EngineFs dataFs = 0;      ///< engine time moving data: padded bytes / (rate * efficiency)
  EngineFs overheadFs = 0;  ///< engine time after the data: dma_transfer_overhead_ns
};

struct DmaPlan {
  std::vector<DmaPart> parts;
  int64_t bytes = 0;
  int64_t hbmBytes = 0;
  int64_t descriptors = 0;
};

/// Elements in the longest contiguous innermost run of `ap` (1 when the innermost step is not 1).
int64_t contiguousRun(const isa::AccessPattern& ap);

/// True when the elements of HBM-side pattern `ap` form one contiguous range (rows back to back).
bool hbmContiguous(const isa::AccessPattern& ap);

/// The DMA engine serving SBUF/PSUM partition `partition`: engines own contiguous groups of
/// partitions / dma_engines partitions (D1: 8 each on a 128-partition core).
int32_t dmaEngineOfPartition(int64_t partition, const MachineConfig& machine);

/// Splits a DmaCopy/DmaTranspose. Rows are the on-chip side's partitions, each carried by the
/// engine of its partition; an HBM-to-HBM transfer spreads its rows over min(rows, dma_engines)
/// engines in contiguous groups (assumption: D1 only says "up to 16 engines, depending on the
/// shape"). A descriptor moves at least dma_min_descriptor_bytes of engine time; a dtype
/// conversion moves each element at the wider of the two widths (assumption, see
/// docs/timing-model.md section 3).
DmaPlan planDma(const isa::Instruction& inst, const MachineConfig& machine);

}  // namespace neuronsim::sim
