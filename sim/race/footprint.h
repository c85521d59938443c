#pragma once
// The exact element-level overlap test for when two operands' bounding boxes (isa/footprint.h)
// meet.

#include <cstdint>

#include "isa/footprint.h"

namespace neuronsim::sim {

using isa::boxesOverlap;
using isa::Footprint;
using isa::footprintOf;

/// True when some byte is touched by both operands (exact, run by run; memory and time follow
/// the distinct elements touched, and operands above ~4M distinct elements count as
/// overlapping). Assumes boxesOverlap.
bool operandsOverlap(const isa::AccessPattern& a, const isa::AccessPattern& b);

}  // namespace neuronsim::sim
