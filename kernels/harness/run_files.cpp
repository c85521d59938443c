// Shape text and NAME=VALUE options of the run command.
#include "kernels/harness/run_files.h"

#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

Shape parseShape(const std::string& text, const std::string& what) {
  Shape shape;
  std::string cur;
  auto flush = [&] {
    if (cur.empty() || cur.size() > 12 ||
        cur.find_first_not_of("0123456789") != std::string::npos || std::stoll(cur) < 1)
      throw Error(what + ": shape '" + text +
                  "' must be positive integers joined by x (e.g. 4x8x16)");
    shape.push_back(std::stoll(cur));
    cur.clear();
  };
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ',') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  isa::checkedElements(shape, what);
  return shape;
}

std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(option + " '" + text + "': expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace neuronsim::kernels
