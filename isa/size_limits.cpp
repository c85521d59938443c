// Shape checks against the size limits, and byte counts for error messages.
#include "isa/size_limits.h"

#include <fmt/format.h>

#include "isa/error.h"

namespace neuronsim::isa {

std::string byteString(int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

int64_t checkedElements(std::span<const int64_t> shape, std::string_view what, bool allowEmpty) {
  if (static_cast<int64_t>(shape.size()) > kMaxRank)
    throw Error(fmt::format("{} has {} axes, over the limit of {}", what, shape.size(), kMaxRank));
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < (allowEmpty ? 0 : 1))
      throw Error(fmt::format("{} has shape {} with an extent below {}", what, shapeString(shape),
                              allowEmpty ? 0 : 1));
    if (!overflow) {
      const auto product = checkedMul(n, d);
      overflow = !product;
      n = product.value_or(0);
    }
  }
  for (int64_t d : shape)
    if (d == 0) return 0;
  if (overflow || n > kMaxTensorElements)
    throw Error(fmt::format(
        "{} has shape {}: {} elements, over the limit of {} per tensor", what, shapeString(shape),
        overflow ? std::string("more than 2^63") : std::to_string(n), kMaxTensorElements));
  return n;
}

}  // namespace neuronsim::isa
