// Command-line option parsing for calibrate.
#include "tools/args.h"

#include "isa/error.h"

namespace neuronsim::tools {

namespace {
bool isBoolWord(const std::string& s) {
  return s == "true" || s == "false";
}
bool looksLikeOption(const std::string& s) {
  return s.size() > 1 && s[0] == '-' && (s[1] == '-' || std::isalpha(s[1]));
}
}  // namespace

Args::Args(int argc, char** argv, int first, const std::set<std::string>& booleanFlags) {
  for (int i = first; i < argc; ++i) {
    std::string token = argv[i];
    if (token.size() < 3 || token.rfind("--", 0) != 0) {
      positional_.push_back(token);
      continue;
    }
    std::string body = token.substr(2);
    auto eq = body.find('=');
    if (eq != std::string::npos) {
      options_.emplace_back(body.substr(0, eq), body.substr(eq + 1));
    } else if (booleanFlags.count(body)) {
      options_.emplace_back(body, i + 1 < argc && isBoolWord(argv[i + 1]) ? argv[++i] : "true");
    } else if (i + 1 < argc && !looksLikeOption(argv[i + 1])) {
      options_.emplace_back(body, argv[++i]);
    } else {
      options_.emplace_back(body, std::nullopt);
    }
  }
}

std::optional<std::string> Args::get(const std::string& name) const {
  std::optional<std::string> value;
  bool seen = false;
  for (const auto& [k, v] : options_) {
    if (k != name) continue;
    if (seen) throw Error("option --" + name + " given twice");
    if (!v) throw Error("option --" + name + " needs a value");
    value = v;
    seen = true;
  }
  return value;
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> values;
  for (const auto& [k, v] : options_) {
    if (k != name) continue;
    if (!v) throw Error("option --" + name + " needs a value");
    values.push_back(*v);
  }
  return values;
}

bool Args::flag(const std::string& name) const {
  auto value = get(name);
  if (!value) return false;
  if (*value == "true" || *value == "1" || *value == "yes") return true;
  if (*value == "false" || *value == "0" || *value == "no") return false;
  throw Error("option --" + name + " takes true or false, not '" + *value + "'");
}

void Args::allowOnly(const std::string& command, const std::set<std::string>& known) const {
  for (const auto& [k, v] : options_)
    if (!known.count(k)) throw Error(command + ": unknown option --" + k);
  for (const auto& [k, v] : options_)
    if (!v) throw Error(command + ": option --" + k + " needs a value");
}

}  // namespace neuronsim::tools
