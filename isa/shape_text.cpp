// Shape formatting and parsing.
#include "isa/shape_text.h"

#include <fmt/format.h>

#include <charconv>

#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::isa {

std::string shapeString(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::vector<int64_t> parseShape(std::string_view text, std::string_view what) {
  std::vector<int64_t> shape;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find_first_of("xX,", start), text.size());
    const std::string_view digits = text.substr(start, end - start);
    int64_t extent = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), extent);
    if (digits.empty() || digits.front() == '-' || digits.front() == '+' || ec != std::errc() ||
        ptr != digits.data() + digits.size() || extent < 1)
      throw Error(fmt::format("{}: shape '{}' must be positive integers joined by x (e.g. 4x8x16)",
                              what, text));
    shape.push_back(extent);
    if (end == text.size()) break;
    start = end + 1;
  }
  checkedElements(shape, what);
  return shape;
}

}  // namespace neuronsim::isa
