// Dtype conversions against hand-computed bit patterns: ties to even, subnormals, overflow, NaN,
// Inf.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "isa/dtype.h"

using namespace neuronsim::isa;

namespace {

float f(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

uint32_t enc(Dtype d, float v) {
  std::byte buf[4] = {};
  storeElement(d, v, buf);
  uint32_t b = 0;
  std::memcpy(&b, buf, static_cast<size_t>(dtypeBytes(d)));
  return b;
}

float dec(Dtype d, uint32_t bits) {
  std::byte buf[4];
  std::memcpy(buf, &bits, 4);
  return loadElement(d, buf);
}

int32_t toInt32(float v) {
  return static_cast<int32_t>(enc(Dtype::Int32, v));
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("dtype sizes, names and kinds") {
  CHECK(dtypeBytes(Dtype::Fp32) == 4);
  CHECK(dtypeBytes(Dtype::Bf16) == 2);
  CHECK(dtypeBytes(Dtype::Fp16) == 2);
  CHECK(dtypeBytes(Dtype::Fp8E4m3) == 1);
  CHECK(dtypeBytes(Dtype::Fp8E5m2) == 1);
  CHECK(dtypeBytes(Dtype::Int32) == 4);
  CHECK(dtypeBytes(Dtype::Uint8) == 1);
  CHECK(dtypeName(Dtype::Fp8E4m3) == "fp8_e4m3");
  CHECK(dtypeName(Dtype::Uint8) == "uint8");
  for (int i = 0; i < kNumDtypes; ++i) {
    const auto d = static_cast<Dtype>(i);
    CHECK(dtypeFromName(dtypeName(d)) == d);
  }
  CHECK_FALSE(dtypeFromName("float32").has_value());
  CHECK(isFloat(Dtype::Bf16));
  CHECK(isFloat(Dtype::Fp8E5m2));
  CHECK_FALSE(isFloat(Dtype::Int32));
  CHECK_FALSE(isFloat(Dtype::Uint8));
}

TEST_CASE("fp32 store and load are bit-exact, NaN payload included") {
  for (uint32_t bits :
       {0x3F800000u, 0x80000000u, 0x00000001u, 0x7F800000u, 0x7FA00001u, 0xFFC12345u}) {
    CHECK(enc(Dtype::Fp32, f(bits)) == bits);
    CHECK(std::bit_cast<uint32_t>(dec(Dtype::Fp32, bits)) == bits);
  }
}

TEST_CASE("bf16 rounds to nearest even") {
  CHECK(enc(Dtype::Bf16, 1.0f) == 0x3F80u);
  CHECK(enc(Dtype::Bf16, -2.0f) == 0xC000u);
  CHECK(enc(Dtype::Bf16, f(0x3F808000u)) == 0x3F80u);  // tie, keeps even 0x3F80
  CHECK(enc(Dtype::Bf16, f(0x3F818000u)) == 0x3F82u);  // tie, rounds up to even 0x3F82
  CHECK(enc(Dtype::Bf16, f(0x3F808001u)) == 0x3F81u);  // just above the tie
  CHECK(enc(Dtype::Bf16, f(0x3F807FFFu)) == 0x3F80u);  // just below the tie
  CHECK(enc(Dtype::Bf16, f(0xBF818000u)) == 0xBF82u);  // negative tie
  CHECK(dec(Dtype::Bf16, 0x4049u) == 3.140625f);
}

TEST_CASE("bf16 overflow, Inf, NaN and subnormals") {
  CHECK(enc(Dtype::Bf16, f(0x7F7FFFFFu)) == 0x7F80u);  // FLT_MAX rounds to Inf
  CHECK(enc(Dtype::Bf16, f(0x7F7F7FFFu)) == 0x7F7Fu);  // below the tie: largest finite
  CHECK(enc(Dtype::Bf16, kInf) == 0x7F80u);
  CHECK(enc(Dtype::Bf16, -kInf) == 0xFF80u);
  CHECK(enc(Dtype::Bf16, f(0x7FC00000u)) == 0x7FC0u);
  CHECK(enc(Dtype::Bf16, f(0xFFC00000u)) == 0xFFC0u);
  CHECK(enc(Dtype::Bf16, f(0x7F800001u)) == 0x7FC0u);  // payload only in low bits: stays NaN
  CHECK(std::isnan(dec(Dtype::Bf16, 0x7FC1u)));
  CHECK(enc(Dtype::Bf16, f(0x00010000u)) == 0x0001u);  // bf16 subnormal, exact
  CHECK(enc(Dtype::Bf16, f(0x00008000u)) == 0x0000u);  // tie to even zero
  CHECK(enc(Dtype::Bf16, f(0x00018000u)) == 0x0002u);  // tie to even 2
  CHECK(enc(Dtype::Bf16, f(0x80008001u)) == 0x8001u);  // negative, above the tie
  CHECK(std::bit_cast<uint32_t>(dec(Dtype::Bf16, 0x0001u)) == 0x00010000u);
  CHECK(std::bit_cast<uint32_t>(dec(Dtype::Bf16, 0x8000u)) == 0x80000000u);
}

TEST_CASE("fp16 rounds to nearest even") {
  CHECK(enc(Dtype::Fp16, 1.0f) == 0x3C00u);
  CHECK(enc(Dtype::Fp16, -2.0f) == 0xC000u);
  CHECK(enc(Dtype::Fp16, 0.333333343f) == 0x3555u);
  CHECK(enc(Dtype::Fp16, f(0x3F801000u)) == 0x3C00u);  // 1 + 2^-11: tie, even
  CHECK(enc(Dtype::Fp16, f(0x3F803000u)) == 0x3C02u);  // 1 + 3*2^-11: tie, up to even
  CHECK(enc(Dtype::Fp16, f(0x3F801001u)) == 0x3C01u);
  CHECK(dec(Dtype::Fp16, 0x3555u) == 0.333251953125f);
  CHECK(dec(Dtype::Fp16, 0xC000u) == -2.0f);
}

TEST_CASE("fp16 overflow, Inf, NaN and subnormals") {
  CHECK(enc(Dtype::Fp16, 65504.0f) == 0x7BFFu);
  CHECK(enc(Dtype::Fp16, 65519.0f) == 0x7BFFu);  // below the tie at 65520
  CHECK(enc(Dtype::Fp16, 65520.0f) == 0x7C00u);  // tie between odd max and Inf: Inf
  CHECK(enc(Dtype::Fp16, -1e6f) == 0xFC00u);
  CHECK(enc(Dtype::Fp16, kInf) == 0x7C00u);
  CHECK(enc(Dtype::Fp16, -kInf) == 0xFC00u);
  CHECK(enc(Dtype::Fp16, kNan) == 0x7E00u);
  CHECK(enc(Dtype::Fp16, f(0x7F800001u)) == 0x7E00u);
  CHECK(enc(Dtype::Fp16, std::ldexp(1.0f, -24)) == 0x0001u);     // smallest subnormal
  CHECK(enc(Dtype::Fp16, std::ldexp(1.0f, -25)) == 0x0000u);     // tie to zero
  CHECK(enc(Dtype::Fp16, std::ldexp(1.5f, -25)) == 0x0001u);     // above the tie
  CHECK(enc(Dtype::Fp16, std::ldexp(3.0f, -25)) == 0x0002u);     // tie to even 2
  CHECK(enc(Dtype::Fp16, std::ldexp(1023.0f, -24)) == 0x03FFu);  // largest subnormal
  CHECK(enc(Dtype::Fp16, std::ldexp(2047.0f, -25)) == 0x0400u);  // tie rounds into the normals
  CHECK(enc(Dtype::Fp16, -std::ldexp(1.0f, -14)) == 0x8400u);    // smallest normal
  CHECK(enc(Dtype::Fp16, f(0x00000001u)) == 0x0000u);            // fp32 subnormal
  CHECK(enc(Dtype::Fp16, -0.0f) == 0x8000u);
  CHECK(dec(Dtype::Fp16, 0x0001u) == std::ldexp(1.0f, -24));
  CHECK(dec(Dtype::Fp16, 0x03FFu) == std::ldexp(1023.0f, -24));
  CHECK(dec(Dtype::Fp16, 0x7BFFu) == 65504.0f);
  CHECK(dec(Dtype::Fp16, 0x7C00u) == kInf);
  CHECK(dec(Dtype::Fp16, 0xFC00u) == -kInf);
  CHECK(std::isnan(dec(Dtype::Fp16, 0x7E00u)));
  CHECK(std::isnan(dec(Dtype::Fp16, 0x7C01u)));
}

TEST_CASE("fp8_e5m2: IEEE-like with Inf") {
  CHECK(enc(Dtype::Fp8E5m2, 1.0f) == 0x3Cu);
  CHECK(enc(Dtype::Fp8E5m2, 1.125f) == 0x3Cu);  // tie to even 1.0
  CHECK(enc(Dtype::Fp8E5m2, 1.375f) == 0x3Eu);  // tie to even 1.5
  CHECK(enc(Dtype::Fp8E5m2, 57344.0f) == 0x7Bu);
  CHECK(enc(Dtype::Fp8E5m2, 60000.0f) == 0x7Bu);
  CHECK(enc(Dtype::Fp8E5m2, 61440.0f) == 0x7Cu);  // tie between odd max and Inf
  CHECK(enc(Dtype::Fp8E5m2, kInf) == 0x7Cu);
  CHECK(enc(Dtype::Fp8E5m2, -kInf) == 0xFCu);
  CHECK(enc(Dtype::Fp8E5m2, kNan) == 0x7Eu);
  CHECK(enc(Dtype::Fp8E5m2, std::ldexp(1.0f, -16)) == 0x01u);
  CHECK(enc(Dtype::Fp8E5m2, std::ldexp(1.0f, -17)) == 0x00u);
  CHECK(enc(Dtype::Fp8E5m2, -std::ldexp(3.0f, -17)) == 0x82u);
  CHECK(dec(Dtype::Fp8E5m2, 0x03u) == std::ldexp(3.0f, -16));
  CHECK(dec(Dtype::Fp8E5m2, 0x7Bu) == 57344.0f);
  CHECK(dec(Dtype::Fp8E5m2, 0xFCu) == -kInf);
  CHECK(std::isnan(dec(Dtype::Fp8E5m2, 0x7Du)));
  CHECK(std::bit_cast<uint32_t>(dec(Dtype::Fp8E5m2, 0x80u)) == 0x80000000u);
}

TEST_CASE("fp8_e4m3 (e4m3fn): no Inf, saturates at 448, NaN is S.1111.111") {
  CHECK(enc(Dtype::Fp8E4m3, 1.0f) == 0x38u);
  CHECK(enc(Dtype::Fp8E4m3, 1.0625f) == 0x38u);  // tie to even 1.0
  CHECK(enc(Dtype::Fp8E4m3, 1.1875f) == 0x3Au);  // tie to even 1.25
  CHECK(enc(Dtype::Fp8E4m3, 448.0f) == 0x7Eu);
  CHECK(enc(Dtype::Fp8E4m3, 464.0f) == 0x7Eu);
  CHECK(enc(Dtype::Fp8E4m3, 480.0f) == 0x7Eu);  // would be the NaN pattern: saturates
  CHECK(enc(Dtype::Fp8E4m3, 1e6f) == 0x7Eu);
  CHECK(enc(Dtype::Fp8E4m3, -1e6f) == 0xFEu);
  CHECK(enc(Dtype::Fp8E4m3, kInf) == 0x7Eu);
  CHECK(enc(Dtype::Fp8E4m3, -kInf) == 0xFEu);
  CHECK(enc(Dtype::Fp8E4m3, kNan) == 0x7Fu);
  CHECK(enc(Dtype::Fp8E4m3, -kNan) == 0xFFu);
  CHECK(enc(Dtype::Fp8E4m3, std::ldexp(1.0f, -9)) == 0x01u);   // smallest subnormal
  CHECK(enc(Dtype::Fp8E4m3, std::ldexp(1.0f, -10)) == 0x00u);  // tie to zero
  CHECK(enc(Dtype::Fp8E4m3, std::ldexp(3.0f, -10)) == 0x02u);  // tie to even 2
  CHECK(enc(Dtype::Fp8E4m3, std::ldexp(7.0f, -9)) == 0x07u);
  CHECK(enc(Dtype::Fp8E4m3, std::ldexp(1.0f, -6)) == 0x08u);
  CHECK(dec(Dtype::Fp8E4m3, 0x7Eu) == 448.0f);
  CHECK(dec(Dtype::Fp8E4m3, 0xFEu) == -448.0f);
  CHECK(dec(Dtype::Fp8E4m3, 0x78u) == 256.0f);
  CHECK(dec(Dtype::Fp8E4m3, 0x01u) == std::ldexp(1.0f, -9));
  CHECK(std::isnan(dec(Dtype::Fp8E4m3, 0x7Fu)));
  CHECK(std::isnan(dec(Dtype::Fp8E4m3, 0xFFu)));
}

TEST_CASE("int32 from float: nearest even, saturation, NaN to 0") {
  CHECK(toInt32(2.5f) == 2);
  CHECK(toInt32(3.5f) == 4);
  CHECK(toInt32(-2.5f) == -2);
  CHECK(toInt32(-3.5f) == -4);
  CHECK(toInt32(2.4f) == 2);
  CHECK(toInt32(2.6f) == 3);
  CHECK(toInt32(0.5f) == 0);
  CHECK(toInt32(-0.5f) == 0);
  CHECK(toInt32(-1.5f) == -2);
  CHECK(toInt32(2147483520.0f) == 2147483520);
  CHECK(toInt32(2147483648.0f) == std::numeric_limits<int32_t>::max());
  CHECK(toInt32(3e9f) == std::numeric_limits<int32_t>::max());
  CHECK(toInt32(-2147483648.0f) == std::numeric_limits<int32_t>::min());
  CHECK(toInt32(-3e9f) == std::numeric_limits<int32_t>::min());
  CHECK(toInt32(kInf) == std::numeric_limits<int32_t>::max());
  CHECK(toInt32(-kInf) == std::numeric_limits<int32_t>::min());
  CHECK(toInt32(kNan) == 0);
  CHECK(dec(Dtype::Int32, static_cast<uint32_t>(-7)) == -7.0f);
  CHECK(dec(Dtype::Int32, 123456789u) == 123456792.0f);  // nearest float
}

TEST_CASE("uint8 from float: nearest even, saturation, NaN to 0") {
  CHECK(enc(Dtype::Uint8, 254.5f) == 254u);
  CHECK(enc(Dtype::Uint8, 253.5f) == 254u);
  CHECK(enc(Dtype::Uint8, 255.4f) == 255u);
  CHECK(enc(Dtype::Uint8, 300.0f) == 255u);
  CHECK(enc(Dtype::Uint8, 0.5f) == 0u);
  CHECK(enc(Dtype::Uint8, 1.5f) == 2u);
  CHECK(enc(Dtype::Uint8, -1.0f) == 0u);
  CHECK(enc(Dtype::Uint8, -0.4f) == 0u);
  CHECK(enc(Dtype::Uint8, kNan) == 0u);
  CHECK(enc(Dtype::Uint8, kInf) == 255u);
  CHECK(dec(Dtype::Uint8, 200u) == 200.0f);
}

TEST_CASE("roundTo is store then load") {
  CHECK(roundTo(Dtype::Bf16, 1.00390625f) == 1.0f);  // 1 + 2^-8 ties to 1
  CHECK(roundTo(Dtype::Fp16, 65520.0f) == std::numeric_limits<float>::infinity());
  CHECK(roundTo(Dtype::Fp8E4m3, 1000.0f) == 448.0f);
  CHECK(roundTo(Dtype::Int32, -2.5f) == -2.0f);
  CHECK(roundTo(Dtype::Fp32, 0.1f) == 0.1f);
}

TEST_CASE("every fp16 and bf16 value survives a round trip through fp32") {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    if (std::isnan(dec(Dtype::Fp16, b))) continue;
    REQUIRE(enc(Dtype::Fp16, dec(Dtype::Fp16, b)) == b);
  }
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    if (std::isnan(dec(Dtype::Bf16, b))) continue;
    REQUIRE(enc(Dtype::Bf16, dec(Dtype::Bf16, b)) == b);
  }
  CHECK(enc(Dtype::Bf16, dec(Dtype::Bf16, 0xFFFFu)) == 0xFFFFu);  // quiet NaN keeps its payload
  for (uint32_t b = 0; b < 0x100u; ++b) {
    REQUIRE(enc(Dtype::Fp8E4m3, dec(Dtype::Fp8E4m3, b)) == b);
    if (!std::isnan(dec(Dtype::Fp8E5m2, b)))
      REQUIRE(enc(Dtype::Fp8E5m2, dec(Dtype::Fp8E5m2, b)) == b);
  }
}

namespace {

/// The positive finite values of a small float format in code order (which is value order).
struct Table {
  Dtype dtype;
  std::vector<float> values;  ///< values[c] = decode(c) for codes 0..maxFinite
  uint32_t signBit;
  bool saturates;  ///< e4m3fn: beyond max saturates; IEEE formats: the next power of two is Inf
};

Table table(Dtype d) {
  Table t{d, {}, d == Dtype::Fp16 ? 0x8000u : 0x80u, d == Dtype::Fp8E4m3};
  for (uint32_t c = 0; c < t.signBit; ++c) {
    const float v = dec(d, c);
    if (std::isnan(v) || std::isinf(v)) break;
    t.values.push_back(v);
  }
  return t;
}

/// Reference encoder: nearest table value by binary search, ties to the even code.
uint32_t nearest(const Table& t, float v) {
  const uint32_t sign = std::signbit(v) ? t.signBit : 0u;
  const double a = std::fabs(static_cast<double>(v));
  const auto maxCode = static_cast<uint32_t>(t.values.size() - 1);
  // The code just past the largest finite: Inf (IEEE) at the next binade's start, or saturation.
  const double maxV = t.values.back();
  const double next = maxV + (maxV - t.values[maxCode - 1]);
  if (a >= next) return sign | (t.saturates ? maxCode : maxCode + 1);
  if (a > maxV) {
    if (t.saturates) return sign | maxCode;
    const double mid = (maxV + next) / 2;
    if (a < mid) return sign | maxCode;
    return sign | (maxCode + 1);  // a tie goes to Inf, whose code is even
  }
  const auto it = std::lower_bound(t.values.begin(), t.values.end(), static_cast<float>(a));
  auto hi = static_cast<uint32_t>(it - t.values.begin());
  if (t.values[hi] == a || hi == 0) return sign | hi;
  const uint32_t lo = hi - 1;
  const double dl = a - t.values[lo], dh = t.values[hi] - a;
  if (dl < dh) return sign | lo;
  if (dh < dl) return sign | hi;
  return sign | ((lo & 1u) ? hi : lo);
}

}  // namespace

TEST_CASE("fp16 and fp8 encoding equals the nearest representable value (independent reference)") {
  for (Dtype d : {Dtype::Fp16, Dtype::Fp8E5m2, Dtype::Fp8E4m3}) {
    CAPTURE(dtypeName(d));
    const Table t = table(d);
    // Every midpoint between neighbours, and one fp32 ulp either side of it.
    for (size_t c = 0; c + 1 < t.values.size(); ++c) {
      const auto mid = static_cast<float>((static_cast<double>(t.values[c]) + t.values[c + 1]) / 2);
      for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), -mid}) {
        CAPTURE(v);
        REQUIRE(enc(d, v) == nearest(t, v));
      }
    }
    // Pseudo-random values over the format's range and a little beyond.
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const auto r = static_cast<uint32_t>(state >> 32);
      const int exp = 127 - 30 + static_cast<int>((r >> 23) % 50);  // 2^-30 .. 2^19
      const float v = f((r & 0x80000000u) | (static_cast<uint32_t>(exp) << 23) | (r & 0x7FFFFFu));
      CAPTURE(v);
      REQUIRE(enc(d, v) == nearest(t, v));
    }
  }
}
