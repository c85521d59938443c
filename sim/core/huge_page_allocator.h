#pragma once
// The simulator's names for the ISA's huge-page allocator (isa/huge_page_allocator.h).

#include "isa/huge_page_allocator.h"

namespace neuronsim::sim {

using isa::allocateLarge;
using isa::HugePageAllocator;
using isa::LargeVector;

}  // namespace neuronsim::sim
