#pragma once
// Command-line helpers of a kernel run: shape text and NAME=VALUE pairs.

#include <string>
#include <utility>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// "4x8x16" -> [4, 8, 16]; throws neuronsim::Error naming `what` on anything else, and on a
/// shape over the size limits (isa/size_limits.h).
Shape parseShape(const std::string& text, const std::string& what);
/// "NAME=VALUE" -> (NAME, VALUE); throws neuronsim::Error naming `option` when malformed.
std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option);

}  // namespace neuronsim::kernels
