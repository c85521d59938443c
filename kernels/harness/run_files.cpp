// Shape text, NAME=VALUE options and atomic writes for the run command.
#include "kernels/harness/run_files.h"

#include <cstdio>
#include <fstream>

#include "isa/error.h"

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
  return shape;
}

std::pair<std::string, std::string> splitAssignment(const std::string& text,
                                                    const std::string& option) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(option + " '" + text + "': expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void writeFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + path + "'");
    out << content;
    if (!out) throw Error("cannot write '" + path + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "'");
  }
}

}  // namespace neuronsim::kernels
