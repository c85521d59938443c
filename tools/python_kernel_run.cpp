// neuronsim run FILE.py:KERNEL: hands the command to the neuronsim Python package, which
// builds the Python kernel and runs it through the same harness (python3 -m neuronsim run).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

bool isPythonKernel(const char* kernel) {
  const size_t n = std::strlen(kernel);
  return std::strstr(kernel, ".py:") != nullptr || (n > 3 && !std::strcmp(kernel + n - 3, ".py"));
}

int runPythonKernel(int argc, char** argv) {
#if defined(NEURONSIM_PYTHON) && defined(NEURONSIM_PYTHON_DIR)
  std::string path = NEURONSIM_PYTHON_DIR;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path.append(":").append(old);
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<char*> args = {const_cast<char*>(NEURONSIM_PYTHON), const_cast<char*>("-m"),
                             const_cast<char*>("neuronsim")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(NEURONSIM_PYTHON, args.data());
  throw Error(fmt::format("run: cannot start {} for {}: {}", NEURONSIM_PYTHON, argv[2],
                          std::strerror(errno)));
#else
  (void)argc;
  throw Error(fmt::format("run: {}: this neuronsim was built without the Python module", argv[2]));
#endif
}

}  // namespace neuronsim::tools
