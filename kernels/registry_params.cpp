// Kernel parameter values: typed getters and parsing from command-line text.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "isa/spelling.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

namespace {

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else if (c != ' ' && c != '(' && c != ')' && c != '[' && c != ']') {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

int64_t parseInt(const KernelSpec& spec, const ParamSpec& param, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    throw Error(fmt::format("{}: parameter {} takes integers{}, not '{}'", spec.name, param.name,
                            param.schedule ? " or auto" : "", text));
  if (errno == ERANGE || v > isa::kMaxParamValue || v < -isa::kMaxParamValue)
    throw Error(fmt::format("{}: parameter {} value {} is out of range (at most {} in magnitude)",
                            spec.name, param.name, text, isa::kMaxParamValue));
  return v;
}

ParamValue parseValue(const KernelSpec& spec, const ParamSpec& param, const std::string& text) {
  switch (param.type) {
    case ParamType::Int:
      return parseInt(spec, param, text);
    case ParamType::Int3: {
      const auto parts = splitCommas(text);
      if (parts.size() != 1 && parts.size() != 3)
        throw Error(fmt::format("{}: parameter {} takes 1 or 3 integers, not '{}'", spec.name,
                                param.name, text));
      std::array<int64_t, 3> v{};
      for (int i = 0; i < 3; ++i) v[i] = parseInt(spec, param, parts[parts.size() == 1 ? 0 : i]);
      return v;
    }
    case ParamType::Int6: {
      const auto parts = splitCommas(text);
      std::array<int64_t, 6> v{};
      if (parts.size() == 1) {
        v.fill(parseInt(spec, param, parts[0]));
      } else if (parts.size() == 3) {
        for (int i = 0; i < 3; ++i) v[2 * i] = v[2 * i + 1] = parseInt(spec, param, parts[i]);
      } else if (parts.size() == 6) {
        for (int i = 0; i < 6; ++i) v[i] = parseInt(spec, param, parts[i]);
      } else {
        throw Error(fmt::format("{}: parameter {} takes 1, 3 or 6 integers, not '{}'", spec.name,
                                param.name, text));
      }
      return v;
    }
    case ParamType::Bool:
      if (text == "true" || text == "1" || text == "yes" || text == "True") return true;
      if (text == "false" || text == "0" || text == "no" || text == "False") return false;
      throw Error(fmt::format("{}: parameter {} takes true or false, not '{}'", spec.name,
                              param.name, text));
    case ParamType::String:
      return text;
    case ParamType::Enum: {
      for (const std::string& c : param.choices)
        if (c == text) return text;
      throw Error(fmt::format("{}: parameter {} takes one of {}, not '{}'", spec.name, param.name,
                              fmt::join(param.choices, ", "), text));
    }
  }
  return text;
}

/// "auto" on a schedule parameter that has no "auto" value of its own: left unset.
bool leftToKernel(const ParamSpec& param, const std::string& text) {
  if (!param.schedule || text != kAuto) return false;
  for (const std::string& c : param.choices)
    if (c == kAuto) return false;
  return true;
}

/// "KERNEL: NAME V is not in LO..HI", or "... is below LO" without an upper bound.
std::string outOfRangeText(const KernelSpec& spec, const ParamSpec& param, int64_t value,
                           int64_t hi) {
  if (hi == std::numeric_limits<int64_t>::max())
    return fmt::format("{}: {} {} is below {}", spec.name, param.name, value, param.lo);
  return fmt::format("{}: {} {} is not in {}..{}", spec.name, param.name, value, param.lo, hi);
}

void assign(ParamValues& values, const KernelSpec& spec, const ParamSpec& param,
            const std::string& text) {
  if (leftToKernel(param, text)) {
    values.erase(param.name);
    return;
  }
  ParamValue value = parseValue(spec, param, text);
  if (const auto* v = std::get_if<int64_t>(&value); v && (*v < param.lo || *v > param.hi))
    throw Error(outOfRangeText(spec, param, *v, param.hi));
  values.set(param.name, std::move(value));
}

}  // namespace

std::string_view paramTypeName(ParamType type) {
  switch (type) {
    case ParamType::Int:
      return "int";
    case ParamType::Int3:
      return "int3";
    case ParamType::Int6:
      return "int6";
    case ParamType::Bool:
      return "bool";
    case ParamType::String:
      return "string";
    case ParamType::Enum:
      return "enum";
  }
  return "?";
}

const ParamValue& ParamValues::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error(fmt::format("parameter {} is not set", name));
  return it->second;
}

int64_t ParamValues::getInt(const std::string& name) const {
  const ParamValue& v = at(name);
  if (const auto* p = std::get_if<int64_t>(&v)) return *p;
  throw Error(fmt::format("parameter {} is not an int", name));
}

std::array<int64_t, 3> ParamValues::getInt3(const std::string& name) const {
  const ParamValue& v = at(name);
  if (const auto* p = std::get_if<std::array<int64_t, 3>>(&v)) return *p;
  if (const auto* p = std::get_if<int64_t>(&v)) return {*p, *p, *p};
  throw Error(fmt::format("parameter {} is not an int3", name));
}

std::array<int64_t, 6> ParamValues::getInt6(const std::string& name) const {
  const ParamValue& v = at(name);
  if (const auto* p = std::get_if<std::array<int64_t, 6>>(&v)) return *p;
  if (const auto* p = std::get_if<std::array<int64_t, 3>>(&v))
    return {(*p)[0], (*p)[0], (*p)[1], (*p)[1], (*p)[2], (*p)[2]};
  if (const auto* p = std::get_if<int64_t>(&v)) return {*p, *p, *p, *p, *p, *p};
  throw Error(fmt::format("parameter {} is not an int6", name));
}

bool ParamValues::getBool(const std::string& name) const {
  const ParamValue& v = at(name);
  if (const auto* p = std::get_if<bool>(&v)) return *p;
  throw Error(fmt::format("parameter {} is not a bool", name));
}

const std::string& ParamValues::getString(const std::string& name) const {
  const ParamValue& v = at(name);
  if (const auto* p = std::get_if<std::string>(&v)) return *p;
  throw Error(fmt::format("parameter {} is not a string", name));
}

namespace {

/// "KERNEL: unknown parameter NAME (did you mean ...?) (neuronsim list KERNEL lists them)".
std::string unknownParamText(const KernelSpec& spec, const std::string& name) {
  std::vector<std::string> names;
  for (const ParamSpec& p : spec.params) names.push_back(p.name);
  return fmt::format("{}: unknown parameter {}{} (neuronsim list {} lists them)", spec.name, name,
                     isa::didYouMean(name, names), spec.name);
}

}  // namespace

ParamValues parseParams(const KernelSpec& spec,
                        const std::vector<std::pair<std::string, std::string>>& given) {
  ParamValues values;
  for (const ParamSpec& p : spec.params)
    if (!p.defaultValue.empty()) assign(values, spec, p, p.defaultValue);
  for (const auto& [name, text] : given) {
    const ParamSpec* param = nullptr;
    for (const ParamSpec& p : spec.params)
      if (p.name == name) param = &p;
    if (!param) throw Error(unknownParamText(spec, name));
    assign(values, spec, *param, text);
  }
  return values;
}

ParamSpec ParamSpec::within(int64_t low, int64_t high) const {
  ParamSpec copy = *this;
  copy.lo = low;
  copy.hi = high;
  return copy;
}

ParamSpec ParamSpec::within(int64_t low, std::function<int64_t(const isa::Geometry&)> high,
                            std::string meaning) const {
  ParamSpec copy = within(low);
  copy.machineHi = std::move(high);
  copy.machineHiMeaning = std::move(meaning);
  return copy;
}

ParamSpec ParamSpec::withinPsumBanks() const {
  return within(
      1, [](const isa::Geometry& g) -> int64_t { return g.psumBanks; }, "the machine's PSUM banks");
}

void checkMachineRanges(const KernelSpec& spec, const ParamValues& params,
                        const isa::Geometry& geometry) {
  for (const ParamSpec& p : spec.params) {
    if (!p.machineHi || !params.has(p.name)) continue;
    const int64_t value = params.getInt(p.name), hi = std::min(p.hi, p.machineHi(geometry));
    if (value > hi)
      throw Error(
          fmt::format("{} ({}: {})", outOfRangeText(spec, p, value, hi), hi, p.machineHiMeaning));
  }
}

std::vector<const ParamSpec*> scheduleParams(const KernelSpec& spec) {
  std::vector<const ParamSpec*> out;
  for (const ParamSpec& p : spec.params)
    if (p.schedule) out.push_back(&p);
  return out;
}

std::vector<std::string> sweepCandidates(const ParamSpec& param) {
  if (!param.candidates.empty()) return param.candidates;
  return param.type == ParamType::Enum ? param.choices : std::vector<std::string>{};
}

ParamSpec scheduleParam(std::string name, ParamType type, std::string meaning,
                        std::vector<std::string> candidates, std::vector<std::string> choices) {
  ParamSpec param{std::move(name), type, kAuto, std::move(meaning), std::move(choices)};
  param.schedule = true;
  if (type == ParamType::Enum && !param.choices.empty() && param.choices[0] != kAuto)
    param.choices.insert(param.choices.begin(), kAuto);
  if (!candidates.empty() && candidates[0] != kAuto) candidates.insert(candidates.begin(), kAuto);
  param.candidates = std::move(candidates);
  return param;
}

std::string flagName(const std::string& paramName) {
  std::string flag = paramName;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

int64_t shapeElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    const auto product = isa::checkedMul(n, d);
    if (!product)
      throw Error(fmt::format("shape {} has more than 2^63 elements", shapeText(shape)));
    n = *product;
  }
  return n;
}

}  // namespace neuronsim::kernels
