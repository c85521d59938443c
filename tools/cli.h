#pragma once
// CLI11 conventions shared by the subcommands: options that refuse a flag as their value,
// repeated single options refused, unknown arguments reported by name.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace neuronsim::tools {

/// Formats to standard output through stdio, whose errors main() reports once at exit.
template <typename... T>
void print(fmt::format_string<T...> format, T&&... args) {
  std::fputs(fmt::format(format, std::forward<T>(args)...).c_str(), stdout);
}

/// A subcommand: its CLI11 app, and what runs when it was chosen (returns the exit status).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// `--name VALUE`, at most once; a value that looks like an option (`--trace --check`) is refused.
CLI::Option* addValue(CLI::App* app, const std::string& name, std::string& value,
                      const std::string& help, const std::string& typeName);
/// `--name VALUE`, repeatable, in order.
CLI::Option* addRepeated(CLI::App* app, const std::string& name, std::vector<std::string>& values,
                         const std::string& help, const std::string& typeName);
/// `--name` (or `--name=true|false`), at most once.
CLI::Option* addFlag(CLI::App* app, const std::string& name, bool& value, const std::string& help);
/// Positional arguments collected as given (their count is checked by the command).
CLI::Option* addPositionals(CLI::App* app, const std::string& name,
                            std::vector<std::string>& values, const std::string& help);

/// A subcommand of `parent` that collects unknown arguments for checkExtras.
CLI::App* addSubcommand(CLI::App& parent, const std::string& name, const std::string& help);
/// Throws neuronsim::Error "<who>: unknown option --x" or "<who>: unexpected argument 'x'" for
/// the first argument `app` did not recognise.
void checkExtras(const CLI::App* app, const std::string& who);

/// --dry-run's end: prints "<who>: dry run: ..." and returns exit status 0.
int dryRunDone(const std::string& who);

/// The value of an option given at most once, or `fallback`.
std::string valueOr(const CLI::Option* option, const std::string& value,
                    const std::string& fallback);

}  // namespace neuronsim::tools
