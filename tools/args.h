#pragma once
// Command-line options of `calibrate` (the other commands use CLI11, tools/cli.h):
// `--name value`, `--name=value`, bare boolean flags, positionals.

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace neuronsim::tools {

class Args {
 public:
  /// Parses argv[first..]. Names in `booleanFlags` take no value unless written `--name=value`
  /// or followed by `true`/`false`. A value that looks like an option is not taken as a value.
  Args(int argc, char** argv, int first, const std::set<std::string>& booleanFlags = {});

  const std::vector<std::string>& positional() const { return positional_; }
  /// The value of --name, if given; throws neuronsim::Error when given twice or without a value.
  std::optional<std::string> get(const std::string& name) const;
  /// Every value of a repeatable --name, in order.
  std::vector<std::string> all(const std::string& name) const;
  /// A boolean flag: absent -> false; bare or true/1/yes -> true; false/0/no -> false.
  bool flag(const std::string& name) const;
  bool has(const std::string& name) const { return get(name).has_value(); }
  /// Throws neuronsim::Error naming the first option not in `known` (with `command` named), then
  /// the first option of `known` given without a value.
  void allowOnly(const std::string& command, const std::set<std::string>& known) const;

 private:
  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::optional<std::string>>> options_;
};

}  // namespace neuronsim::tools
