#pragma once
// What the builder remembers about each SBUF/PSUM allocation: space, size and the instructions
// touching it.

#include <cstdint>
#include <string>
#include <vector>

#include "isa/instruction.h"

namespace neuronsim::kernels {

/// One SBUF or PSUM allocation of a built kernel, in allocation order.
struct AllocationRecord {
  isa::Space space = isa::Space::Sbuf;
  std::string name;        ///< the tile's name
  int64_t offset = 0;      ///< first byte in every partition
  int64_t bytes = 0;       ///< bytes per partition reserved (rounded up to the alignment)
  int32_t partitions = 0;  ///< partitions [0, partitions) the tile spans
  std::vector<int64_t>
      instructions;  ///< indices of the instructions reading or writing it, ascending, unique
  int64_t firstInstruction() const { return instructions.empty() ? -1 : instructions.front(); }
  int64_t lastInstruction() const { return instructions.empty() ? -1 : instructions.back(); }
};

}  // namespace neuronsim::kernels
