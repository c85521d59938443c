#pragma once
// The memory an operand touches: a bounding box (space, tensor, partitions, bytes) and an
// exact element-level overlap test for when boxes meet.

#include <cstdint>

#include "isa/access_pattern.h"

namespace neuronsim::sim {

/// Bounding box of one operand. On chip: partitions [partBegin, partEnd) and bytes
/// [byteBegin, byteEnd) inside each partition. HBM: tensor `tensor`, one row
/// (partBegin 0, partEnd 1), bytes of the flattened tensor.
struct Footprint {
  isa::Space space;
  int32_t tensor;  ///< HBM only (-1 on chip)
  int32_t partBegin;
  int32_t partEnd;
  int64_t byteBegin;
  int64_t byteEnd;
};

/// The footprint of `ap`, whose elements are `elementBytes` wide; stores the product of its
/// dims' nums (elements per partition) in `freeSize` when given.
Footprint footprintOf(const isa::AccessPattern& ap, int64_t elementBytes,
                      int64_t* freeSize = nullptr);
inline Footprint footprintOf(const isa::AccessPattern& ap) {
  return footprintOf(ap, isa::dtypeBytes(ap.dtype));
}
/// True when the boxes share a space, tensor, partition and byte.
bool boxesOverlap(const Footprint& a, const Footprint& b);
/// True when some byte is touched by both operands (exact, run by run; memory and time follow
/// the distinct elements touched, and operands above ~4M distinct elements count as
/// overlapping). Assumes boxesOverlap.
bool operandsOverlap(const isa::AccessPattern& a, const isa::AccessPattern& b);

}  // namespace neuronsim::sim
