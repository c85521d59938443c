#pragma once
// How one DMA instruction splits into per-engine work (D1, D2): rows (partitions) spread over
// the DMA engines, each row cut into descriptors of contiguous chunks.

#include <cstdint>
#include <vector>

#include "isa/instruction.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// One DMA engine's share of a transfer.
struct DmaPart {
  int32_t engine = 0;
  int64_t bytes = 0;     ///< bytes this engine moves (destination side)
  int64_t hbmBytes = 0;  ///< bytes it reads from or writes to HBM
  int64_t descriptors = 0;
  double workNs = 0;  ///< time alone on its engine: bytes / (rate * efficiency) + descriptors *
                      ///< dma_descriptor_ns
};

struct DmaPlan {
  std::vector<DmaPart> parts;
  int64_t bytes = 0;
  int64_t hbmBytes = 0;
  int64_t descriptors = 0;
};

/// Elements in the longest contiguous innermost run of `ap` (1 when the innermost step is not 1).
int64_t contiguousRun(const isa::AccessPattern& ap);

/// Splits a DmaCopy/DmaTranspose on `queue`. Rows are the on-chip side's partitions (the
/// source's when both are HBM); min(rows, dma_engines) engines carry them, starting at engine
/// `queue` mod dma_engines (assumption: spreads small transfers of different queues).
DmaPlan planDma(const isa::Instruction& inst, const MachineConfig& machine);

}  // namespace neuronsim::sim
