// neuronsim: dispatches to one subcommand; user errors become one line and exit status 2.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "isa/error.h"
#include "tools/commands.h"

namespace {

struct Subcommand {
  const char* name;
  const char* usage;
  int (*run)(int, char**);
};

constexpr Subcommand kSubcommands[] = {
    {"list", "list                        kernels, their inputs, outputs and parameters",
     neuronsim::tools::listCommand},
    {"run", "run KERNEL [options]        build the kernel's program and simulate it",
     neuronsim::tools::runCommand},
    {"asm", "asm FILE [options]          simulate a hand-written or dumped program",
     neuronsim::tools::asmCommand},
    {"report", "report TRACE.json           text summary of a saved trace",
     neuronsim::tools::reportCommand},
    {"view", "view TRACE.json [-o F.html] self-contained HTML timeline",
     neuronsim::tools::viewCommand},
    {"diff", "diff A.json B.json          what changed between two runs",
     neuronsim::tools::diffCommand},
    {"calibrate", "calibrate [--machine M]     compare the model with published measurements",
     neuronsim::tools::calibrateCommand},
};

void printHelp(std::FILE* out) {
  std::fprintf(out, "neuronsim: a cycle-approximate simulator of one AWS NeuronCore\n\nusage:\n");
  for (const auto& sub : kSubcommands) std::fprintf(out, "  neuronsim %s\n", sub.usage);
  std::fprintf(out, "\n'neuronsim COMMAND --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "error: no command given (try neuronsim --help)\n");
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    printHelp(stdout);
    return 0;
  }
  for (const auto& sub : kSubcommands) {
    if (std::strcmp(argv[1], sub.name) != 0) continue;
    try {
      return sub.run(argc, argv);
    } catch (const neuronsim::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "error: unknown command '%s' (try neuronsim --help)\n", argv[1]);
  return 2;
}
