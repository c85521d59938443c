// neuronsim: dispatches to one subcommand; user errors become one line and exit status 2.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "isa/error.h"
#include "tools/commands.h"

namespace {

using neuronsim::Error;
using namespace neuronsim::tools;

/// The deepest subcommand chosen on the command line ("run matmul"), for messages.
std::string chosenPath(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands()[0];
    path += fmt::format("{}{}", path.empty() ? "" : " ", at->get_name());
  }
  return path;
}

/// CLI11's message in the project's words where they differ.
std::string parseErrorText(const CLI::ParseError& e) {
  std::string text = e.what();
  const std::string tooMany = ": At Most 1 required but received ";
  if (const size_t at = text.find(tooMany); at != std::string::npos)
    return fmt::format("{} given {} times (at most once)", text.substr(0, at),
                       text.substr(at + tooMany.size()));
  return text;
}

/// Standard output must have reached its destination (a full disk, a closed pipe).
int checkedStdout(int status) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  std::fprintf(stderr, "error: cannot write standard output: %s\n", std::strerror(errno));
  return 2;
}

int run(int argc, char** argv) {
  CLI::App app("neuronsim: a cycle-approximate simulator of one AWS NeuronCore", "neuronsim");
  app.footer("'neuronsim COMMAND --help' describes a command's options.");
  app.allow_extras();
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", fmt::format("neuronsim {}", NEURONSIM_VERSION),
                       "print the version and exit");
  std::vector<Command> commands = {
      addListCommand(app), addRunCommand(app),  addAsmCommand(app),   addReportCommand(app),
      addViewCommand(app), addDiffCommand(app), addSweepCommand(app), addCalibrateCommand(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    return 0;
  } catch (const CLI::ParseError& e) {
    const std::string where = chosenPath(app);
    std::fprintf(stderr, "error: %s%s\n", where.empty() ? "" : fmt::format("{}: ", where).c_str(),
                 parseErrorText(e).c_str());
    return 2;
  }
  for (const Command& command : commands)
    if (command.app->parsed()) return command.run();
  const std::vector<std::string> extras = app.remaining();
  if (extras.empty()) throw Error("no command given (try neuronsim --help)");
  if (extras[0].size() > 1 && extras[0][0] == '-')
    throw Error(fmt::format("unknown option {} (try neuronsim --help)", extras[0]));
  throw Error(fmt::format("unknown command '{}' (try neuronsim --help)", extras[0]));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && !std::strcmp(argv[1], "help")) argv[1] = const_cast<char*>("--help");
  try {
    if (argc > 2 && !std::strcmp(argv[1], "run") && isPythonKernel(argv[2]))
      return runPythonKernel(argc, argv);  // the Python package parses its own options
    return checkedStdout(run(argc, argv));
  } catch (const neuronsim::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "error: out of host memory (more than the run's estimate; see docs/kernels.md)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: internal: %s\n", e.what());
    return 3;
  }
}
