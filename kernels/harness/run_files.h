#pragma once
// Command-line helpers of a kernel run: shape text, NAME=VALUE pairs, atomic file writes.

#include <string>
#include <utility>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// "4x8x16" -> [4, 8, 16]; throws neuronsim::Error naming `what` on anything else.
Shape parseShape(const std::string& text, const std::string& what);
/// "NAME=VALUE" -> (NAME, VALUE); throws neuronsim::Error naming `option` when malformed.
std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option);
/// Writes `content` to a temporary beside `path`, then renames it over `path`.
void writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace neuronsim::kernels
