#pragma once
// String building for error and race messages (append-based, cold paths only).

#include <string>
#include <string_view>

namespace neuronsim::sim {

/// Concatenates string-like pieces.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace neuronsim::sim
