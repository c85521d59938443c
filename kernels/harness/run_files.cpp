// NAME=VALUE options of the run command.
#include "kernels/harness/run_files.h"

#include <fmt/format.h>

#include "isa/error.h"

namespace neuronsim::kernels {

std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(fmt::format("{} '{}': expected NAME=VALUE", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace neuronsim::kernels
