// CLI11 helpers shared by the subcommands.
#include "tools/cli.h"

#include <fmt/format.h>

#include "isa/error.h"
#include "isa/spelling.h"

namespace neuronsim::tools {

namespace {

/// Refuses "--x" and "-x" (x a letter) as a value: a missing value must not swallow the next flag.
const CLI::Validator kNotAnOption(
    [](std::string& value) -> std::string {
      const bool looksLikeOption =
          value.size() > 1 && value[0] == '-' && (value[1] == '-' || std::isalpha(value[1]));
      return looksLikeOption ? fmt::format("needs a value, not the option '{}'", value)
                             : std::string();
    },
    "", "value");

}  // namespace

CLI::Option* addValue(CLI::App* app, const std::string& name, std::string& value,
                      const std::string& help, const std::string& typeName) {
  return app->add_option(name, value, help)
      ->type_name(typeName)
      ->check(kNotAnOption)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

CLI::Option* addRepeated(CLI::App* app, const std::string& name, std::vector<std::string>& values,
                         const std::string& help, const std::string& typeName) {
  return app->add_option(name, values, help)
      ->type_name(typeName)
      ->check(kNotAnOption)
      ->allow_extra_args(false);
}

CLI::Option* addFlag(CLI::App* app, const std::string& name, bool& value, const std::string& help) {
  return app->add_flag(name, value, help)->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

CLI::Option* addPositionals(CLI::App* app, const std::string& name,
                            std::vector<std::string>& values, const std::string& help) {
  return app->add_option(name, values, help);
}

CLI::App* addSubcommand(CLI::App& parent, const std::string& name, const std::string& help) {
  CLI::App* app = parent.add_subcommand(name, help);
  app->allow_extras();
  return app;
}

void checkExtras(const CLI::App* app, const std::string& who) {
  const std::vector<std::string> extras = app->remaining();
  if (extras.empty()) return;
  const std::string& first = extras[0];
  if (first.size() > 1 && first[0] == '-') {
    const std::string option = first.substr(0, first.find('='));
    std::vector<std::string> known;
    for (const CLI::Option* o : app->get_options())
      for (const std::string& name : o->get_lnames()) known.push_back(fmt::format("--{}", name));
    throw Error(
        fmt::format("{}: unknown option {}{}", who, option, isa::didYouMean(option, known)));
  }
  throw Error(fmt::format("{}: unexpected argument '{}'", who, first));
}

std::string valueOr(const CLI::Option* option, const std::string& value,
                    const std::string& fallback) {
  return option->count() > 0 ? value : fallback;
}

int dryRunDone(const std::string& who) {
  print(
      "{}: dry run: arguments, input files and output paths are valid; nothing was simulated "
      "or written\n",
      who);
  return 0;
}

}  // namespace neuronsim::tools
