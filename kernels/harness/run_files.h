#pragma once
// Command-line helper of a kernel run: NAME=VALUE pairs.

#include <string>
#include <utility>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// "NAME=VALUE" -> (NAME, VALUE); throws neuronsim::Error naming `option` when malformed.
std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option);

}  // namespace neuronsim::kernels
