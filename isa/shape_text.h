#pragma once
// Shapes as text: "[4,8,16]" in messages, "4x8x16" on the command line.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::isa {

/// "[4,8,16]".
std::string shapeString(std::span<const int64_t> shape);
/// "4x8x16" (also "4X8X16" or "4,8,16") -> {4, 8, 16}, checked against the size limits
/// (checkedElements). Throws neuronsim::Error naming `what` on anything else.
std::vector<int64_t> parseShape(std::string_view text, std::string_view what);

}  // namespace neuronsim::isa
