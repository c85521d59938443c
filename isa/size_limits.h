#pragma once
// Bounds on what a user may ask for, and overflow-checked size arithmetic. Every size that comes
// from a file, a flag or a shape goes through these before anything is allocated.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "isa/shape_text.h"

namespace neuronsim::isa {

/// Elements in one tensor (a shape, an .npy array, an assembly tensor): 2^32, 16 GiB of fp32.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 32;
/// Axes of one shape.
inline constexpr int64_t kMaxRank = 8;
/// Magnitude of one integer kernel parameter (stride, padding, dilation, kernel size, ...).
inline constexpr int64_t kMaxParamValue = int64_t{1} << 24;
/// Bytes of an .npy header dict.
inline constexpr int64_t kMaxNpyHeaderBytes = int64_t{1} << 16;
/// Bytes of a text-assembly file.
inline constexpr int64_t kMaxAssemblyBytes = int64_t{1} << 30;
/// Bytes of a machine JSON file.
inline constexpr int64_t kMaxMachineFileBytes = int64_t{1} << 20;
/// Bytes of a saved trace read by report, view and diff.
inline constexpr int64_t kMaxTraceBytes = int64_t{4} << 30;

/// a * b, or nothing when it overflows int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
/// a + b, or nothing when it overflows int64.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a / b rounded up (toward +infinity, also for negative a); b > 0.
constexpr int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b > 0 ? 1 : 0);
}
/// a / b rounded down (toward -infinity, also for negative a); b > 0.
constexpr int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - (a % b < 0 ? 1 : 0);
}

/// "2.0 GiB", "312 B": a byte count for people.
std::string byteString(int64_t bytes);

/// Element count of `shape` after checking rank <= kMaxRank, every extent >= 1 (>= 0 when
/// `allowEmpty`) and the product <= kMaxTensorElements, without overflow. Throws
/// neuronsim::Error "<what> has shape [..]: <rule> (limit N)" otherwise.
int64_t checkedElements(std::span<const int64_t> shape, std::string_view what,
                        bool allowEmpty = false);

}  // namespace neuronsim::isa
