#pragma once
// The shape of on-chip memory that programs are validated and run against.

#include <cstdint>

namespace neuronsim::isa {

/// The most DMA queues the simulator's fixed-size tables hold (D1: 16 per engine).
inline constexpr int32_t kMaxDmaQueues = 16;

/// Defaults are Trn2 (reference 1.3, A2); the machine config supplies the real values. The PE
/// array is partitions x partitions (reference 1.3: 128x128 on 128 partitions).
struct Geometry {
  int32_t partitions = 128;
  int64_t sbufPartitionBytes = 224 * 1024;
  int64_t psumPartitionBytes = 16 * 1024;
  int32_t psumBanks = 8;
  int32_t maxMovingFree = 512;  ///< nc_matmul moving free size (v2/v3)
  int32_t dmaQueues = 16;       ///< DMA queues 0..dmaQueues-1 (per DMA engine, D1)
  int64_t psumBankBytes() const { return psumPartitionBytes / psumBanks; }
};

}  // namespace neuronsim::isa
