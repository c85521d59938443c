#pragma once
// The one exception type users see: a one-line message naming the culprit and the rule.

#include <stdexcept>
#include <string>

namespace neuronsim {

/// A user-facing error (bad input, bad program, bad parameter). The CLI prints
/// "error: <what()>" on one line and exits with status 2.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace neuronsim
