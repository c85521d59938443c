#pragma once
// Internal: the bf16 bit conversions, inline so that hot loops in the semantics can use them.

#include <bit>
#include <cstdint>

namespace neuronsim::isa::detail {

/// bf16 bits -> fp32 (exact).
inline float bf16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// fp32 -> bf16 bits: round to nearest even, overflow to Inf, NaN kept (quiet bit set).
inline uint16_t floatToBf16(float v) {
  const uint32_t u = std::bit_cast<uint32_t>(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7FFF plus the kept LSB rounds to nearest even; overflow carries into Inf.
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace neuronsim::isa::detail
