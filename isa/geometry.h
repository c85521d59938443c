#pragma once
// The shape of on-chip memory that programs are validated and run against.

#include <cstdint>

namespace neuronsim::isa {

/// Defaults are Trn2 (reference 1.3, A2); the machine config supplies the real values.
struct Geometry {
  int32_t partitions = 128;
  int64_t sbufPartitionBytes = 224 * 1024;
  int64_t psumPartitionBytes = 16 * 1024;
  int32_t psumBanks = 8;
  int32_t maxMovingFree = 512;  ///< nc_matmul moving free size (v2/v3)
  int64_t psumBankBytes() const { return psumPartitionBytes / psumBanks; }
};

}  // namespace neuronsim::isa
