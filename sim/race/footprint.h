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
  isa::Space space = isa::Space::Sbuf;
  int32_t tensor = -1;
  int32_t partBegin = 0;
  int32_t partEnd = 0;
  int64_t byteBegin = 0;
  int64_t byteEnd = 0;
};

Footprint footprintOf(const isa::AccessPattern& ap);
/// True when the boxes share a space, tensor, partition and byte.
bool boxesOverlap(const Footprint& a, const Footprint& b);
/// True when some byte is touched by both operands (exact, element by element; falls back
/// to true for operands above ~4M elements). Assumes boxesOverlap.
bool operandsOverlap(const isa::AccessPattern& a, const isa::AccessPattern& b);

}  // namespace neuronsim::sim
