#pragma once
// How far an access pattern reaches: element spans of its dims and its bounding box in memory.

#include <cstdint>
#include <span>
#include <vector>

#include "isa/access_pattern.h"

namespace neuronsim::isa {

/// Lowest and highest element offset (inclusive) some dims reach from their base, saturated
/// at the int64 limits (a pattern that reaches them is out of range anyway).
struct ElementSpan {
  int64_t lo = 0;
  int64_t hi = 0;
};
ElementSpan dimsSpan(std::span<const Dim> dims);
/// The span of all element offsets `ap` reaches relative to `offset`: its free dims, plus the
/// partition axis for HBM (whose rows are partitionStep elements apart).
ElementSpan elementSpan(const AccessPattern& ap);

/// The element offset of every position `dims` visit, in visiting order (row-major: the last dim
/// fastest), relative to the pattern's base. Dims with num <= 0 visit nothing.
std::vector<int64_t> visitOffsets(std::span<const Dim> dims);

/// Bounding box of one operand. On chip: partitions [partBegin, partEnd) and bytes
/// [byteBegin, byteEnd) inside each partition. HBM: tensor `tensor`, one row
/// (partBegin 0, partEnd 1), bytes of the flattened tensor. Byte bounds saturate like
/// ElementSpan.
struct Footprint {
  Space space = Space::Sbuf;
  int32_t tensor = -1;  ///< HBM only (-1 on chip)
  int32_t partBegin = 0;
  int32_t partEnd = 1;
  int64_t byteBegin = 0;
  int64_t byteEnd = 0;
};
Footprint footprintOf(const AccessPattern& ap);
/// True when the boxes share a space, tensor, partition and byte.
bool boxesOverlap(const Footprint& a, const Footprint& b);

}  // namespace neuronsim::isa
