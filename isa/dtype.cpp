// Element types: names, sizes and bit-exact conversions to and from fp32.
//
// Conversion rules (fp32 -> dtype; every dtype -> fp32 is exact):
// - bf16, fp16: IEEE 754 binary formats. Round to nearest, ties to even; a magnitude that
//   rounds above the largest finite value becomes Inf; Inf stays Inf; NaN stays NaN (sign
//   and the top payload bits are kept, the quiet bit is set). Subnormals both ways.
// - fp8_e5m2: IEEE-like (bias 15, Inf = S.11111.00, NaN = S.11111.xx with xx != 0), same
//   rules as fp16.
// - fp8_e4m3: the OCP "e4m3fn" variant (bias 7, no Inf, largest finite 448 = S.1111.110,
//   NaN = S.1111.111). Choice: overflow and +-Inf SATURATE to +-448 (as the OCP spec's
//   saturating mode and Trainium's cast do); NaN -> S.1111.111 with the sign kept.
// - int32, uint8: round to nearest, ties to even, then saturate to the type's range
//   ([-2^31, 2^31-1] and [0, 255]); NaN -> 0; +-Inf saturate.
// The float conversions use integer bit manipulation only (no double, no FPU rounding mode).
#include "isa/dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "isa/dtype_bits.h"

namespace neuronsim::isa {

namespace {

/// A binary floating-point format narrower than fp32.
struct SmallFloat {
  int expBits;
  int manBits;
  bool hasInf;  ///< false: e4m3fn (all-ones exponent is finite except mantissa all ones)
};

constexpr SmallFloat kFp16{5, 10, true};
constexpr SmallFloat kE5m2{5, 2, true};
constexpr SmallFloat kE4m3{4, 3, false};

uint32_t floatBits(float v) {
  return std::bit_cast<uint32_t>(v);
}
float bitsFloat(uint32_t b) {
  return std::bit_cast<float>(b);
}

/// Shifts `value` right by `shift` bits (1..31) rounding to nearest, ties to even.
uint32_t shiftRoundEven(uint32_t value, int shift) {
  uint32_t kept = value >> shift;
  uint32_t rem = value & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (kept & 1u))) ++kept;
  return kept;
}

/// fp32 -> SmallFloat bits (in the low expBits+manBits+1 bits).
uint32_t encodeSmall(const SmallFloat& f, float v) {
  const uint32_t u = floatBits(v);
  const uint32_t sign = (u >> 31) << (f.expBits + f.manBits);
  const uint32_t absBits = u & 0x7FFFFFFFu;
  const uint32_t expMask = (1u << f.expBits) - 1u;
  const uint32_t manMask = (1u << f.manBits) - 1u;
  // Largest finite magnitude code, and what an overflow becomes.
  const uint32_t maxFinite =
      f.hasInf ? ((expMask << f.manBits) - 1u) : ((expMask << f.manBits) | (manMask - 1u));
  const uint32_t overflow = f.hasInf ? (expMask << f.manBits) : maxFinite;

  if (absBits > 0x7F800000u) {  // NaN
    if (!f.hasInf) return sign | (expMask << f.manBits) | manMask;
    uint32_t payload = (absBits & 0x7FFFFFu) >> (23 - f.manBits);
    payload |= 1u << (f.manBits - 1);  // quiet bit keeps it a NaN
    return sign | (expMask << f.manBits) | payload;
  }
  if (absBits == 0x7F800000u) return sign | overflow;  // Inf
  const int e32 = static_cast<int>(absBits >> 23);
  if (e32 == 0) return sign;  // fp32 subnormal: below half the smallest target subnormal

  const int bias = (1 << (f.expBits - 1)) - 1;
  const int emin = 1 - bias;
  const int e = e32 - 127;
  const uint32_t mant = absBits & 0x7FFFFFu;
  uint32_t code;
  if (e >= emin) {
    // Normal in the target: exponent field and mantissa combined, so a carry bumps the exponent.
    const int fieldExp = e + bias;
    if (fieldExp > static_cast<int>(expMask)) return sign | overflow;
    const uint32_t combined = (static_cast<uint32_t>(fieldExp) << 23) | mant;
    code = shiftRoundEven(combined, 23 - f.manBits);
  } else {
    // Subnormal in the target: units of 2^(emin - manBits).
    const uint32_t full = mant | 0x800000u;
    const int shift = 23 - f.manBits + (emin - e);
    if (shift >= 25) return sign;  // below half the smallest subnormal
    code = shiftRoundEven(full, shift);
  }
  if (code > maxFinite) code = overflow;
  return sign | code;
}

/// SmallFloat bits -> fp32 (exact).
float decodeSmall(const SmallFloat& f, uint32_t bits) {
  const uint32_t sign = ((bits >> (f.expBits + f.manBits)) & 1u) << 31;
  const uint32_t expMask = (1u << f.expBits) - 1u;
  const uint32_t manMask = (1u << f.manBits) - 1u;
  const uint32_t exp = (bits >> f.manBits) & expMask;
  uint32_t mant = bits & manMask;
  const int bias = (1 << (f.expBits - 1)) - 1;
  if (exp == expMask) {
    if (f.hasInf) return bitsFloat(sign | 0x7F800000u | (mant << (23 - f.manBits)));
    if (mant == manMask) return bitsFloat(sign | 0x7FC00000u);
  }
  int e;
  if (exp == 0) {
    if (mant == 0) return bitsFloat(sign);
    e = 1 - bias;
    while (!(mant & (1u << f.manBits))) {
      mant <<= 1;
      --e;
    }
    mant &= manMask;
  } else {
    e = static_cast<int>(exp) - bias;
  }
  return bitsFloat(sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << (23 - f.manBits)));
}

/// Rounds to nearest even and saturates to [lo, hi]; NaN -> 0.
int64_t roundSaturate(float v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<float>(hi)) return hi;  // hi+1 is a power of two: exact in float
  if (v <= static_cast<float>(lo)) return lo;
  const float t = std::trunc(v);
  const float frac = v - t;  // exact: |v| < 2^31 and t shares v's exponent or less
  int64_t r = static_cast<int64_t>(t);
  const float a = std::fabs(frac);
  if (a > 0.5f || (a == 0.5f && (r & 1))) r += (frac > 0) ? 1 : -1;
  if (r > hi) return hi;
  if (r < lo) return lo;
  return r;
}

constexpr std::array<std::string_view, kNumDtypes> kNames{"fp32",     "bf16",  "fp16", "fp8_e4m3",
                                                          "fp8_e5m2", "int32", "uint8"};

}  // namespace

std::string_view dtypeName(Dtype dtype) {
  return kNames.at(static_cast<size_t>(dtype));
}

std::optional<Dtype> dtypeFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Dtype>(i);
  return std::nullopt;
}

bool isFloat(Dtype dtype) {
  return dtype != Dtype::Int32 && dtype != Dtype::Uint8;
}

float loadElement(Dtype dtype, const std::byte* p) {
  switch (dtype) {
    case Dtype::Fp32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case Dtype::Bf16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return detail::bf16ToFloat(b);
    }
    case Dtype::Fp16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return decodeSmall(kFp16, b);
    }
    case Dtype::Fp8E4m3:
      return decodeSmall(kE4m3, std::to_integer<uint32_t>(*p));
    case Dtype::Fp8E5m2:
      return decodeSmall(kE5m2, std::to_integer<uint32_t>(*p));
    case Dtype::Int32: {
      int32_t i;
      std::memcpy(&i, p, 4);
      return static_cast<float>(i);
    }
    case Dtype::Uint8:
      return static_cast<float>(std::to_integer<uint8_t>(*p));
  }
  return 0.0f;
}

void storeElement(Dtype dtype, float v, std::byte* p) {
  switch (dtype) {
    case Dtype::Fp32:
      std::memcpy(p, &v, 4);
      return;
    case Dtype::Bf16: {
      const uint16_t b = detail::floatToBf16(v);
      std::memcpy(p, &b, 2);
      return;
    }
    case Dtype::Fp16: {
      const auto b = static_cast<uint16_t>(encodeSmall(kFp16, v));
      std::memcpy(p, &b, 2);
      return;
    }
    case Dtype::Fp8E4m3:
      *p = static_cast<std::byte>(encodeSmall(kE4m3, v));
      return;
    case Dtype::Fp8E5m2:
      *p = static_cast<std::byte>(encodeSmall(kE5m2, v));
      return;
    case Dtype::Int32: {
      const auto i = static_cast<int32_t>(roundSaturate(v, std::numeric_limits<int32_t>::min(),
                                                        std::numeric_limits<int32_t>::max()));
      std::memcpy(p, &i, 4);
      return;
    }
    case Dtype::Uint8:
      *p = static_cast<std::byte>(roundSaturate(v, 0, 255));
      return;
  }
}

float roundTo(Dtype dtype, float v) {
  std::byte buf[4];
  storeElement(dtype, v, buf);
  return loadElement(dtype, buf);
}

}  // namespace neuronsim::isa
