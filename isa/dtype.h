#pragma once
// Element types of the simulated ISA and their exact conversions to and from fp32.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace neuronsim::isa {

enum class Dtype : uint8_t { Fp32, Bf16, Fp16, Fp8E4m3, Fp8E5m2, Int32, Uint8 };
inline constexpr int kNumDtypes = 7;

/// Bytes per element of each Dtype, in Dtype order (at namespace scope: a table local to
/// dtypeBytes is rebuilt on the stack at every call).
inline constexpr int8_t kDtypeBytes[kNumDtypes] = {4, 2, 2, 1, 1, 4, 1};
/// Bytes per element (a table lookup: the simulator asks it for every operand it issues).
constexpr int dtypeBytes(Dtype dtype) {
  const auto i = static_cast<size_t>(dtype);
  return i < kNumDtypes ? kDtypeBytes[i] : 4;
}
/// Assembly name: fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int32, uint8.
std::string_view dtypeName(Dtype dtype);
std::optional<Dtype> dtypeFromName(std::string_view name);
bool isFloat(Dtype dtype);

/// Decodes one element at p (little endian) to fp32. Engines compute in fp32.
float loadElement(Dtype dtype, const std::byte* p);
/// Encodes v into one element at p. Floats round to nearest even; the rules for
/// overflow, NaN and Inf of each type are documented in dtype.cpp and tested.
void storeElement(Dtype dtype, float v, std::byte* p);
/// v rounded through dtype and back (what a store then load gives).
float roundTo(Dtype dtype, float v);

}  // namespace neuronsim::isa
