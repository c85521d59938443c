// Grid expansion, axis and shard parsing for neuronsim sweep.
#include "kernels/sweep/sweep_grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

/// A positive integer below 10^9, or nothing.
int64_t positive(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoll(text);
}

/// Throws unless `value` (an int3/int6 already with commas) is one for `param`; the error quotes
/// the value as written, with colons.
void checkValue(const KernelSpec& spec, const std::string& param, const std::string& value) {
  try {
    parseParams(spec, {{param, value}});  // throws: unknown parameter or bad value
  } catch (const Error& e) {
    std::string what = e.what();
    std::string written = value;
    std::replace(written.begin(), written.end(), ',', ':');
    const std::string quoted = fmt::format("'{}'", value);
    if (written == value || what.find(quoted) == std::string::npos) throw;
    what.replace(what.find(quoted), quoted.size(), fmt::format("'{}'", written));
    throw Error(what);
  }
}

}  // namespace

SweepAxis parseAxis(const KernelSpec& spec, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == 0)
    throw Error(fmt::format("sweep: --param takes NAME=v1,v2,... or NAME, not '{}'", text));
  SweepAxis axis;
  axis.param = text.substr(0, eq);
  for (char& c : axis.param)
    if (c == '-') c = '_';
  if (eq == std::string::npos) {
    const ParamSpec* param = nullptr;
    for (const ParamSpec& p : spec.params)
      if (p.name == axis.param) param = &p;
    if (!param) parseParams(spec, {{axis.param, ""}});  // throws: unknown parameter
    axis.values = sweepCandidates(*param);
    if (axis.values.empty())
      throw Error(fmt::format(
          "sweep: --param {} needs values (NAME=v1,v2,...): {} declares no candidates for it",
          axis.param, spec.name));
    return axis;
  }
  for (std::string value : split(text.substr(eq + 1), ',')) {
    if (value.empty())
      throw Error(fmt::format("sweep: --param {} has an empty value in '{}'", axis.param, text));
    for (char& c : value)
      if (c == ':') c = ',';
    axis.values.push_back(value);
  }
  return axis;
}

std::vector<SweepAxis> scheduleAxes(const KernelSpec& spec) {
  std::vector<SweepAxis> axes;
  for (const ParamSpec* param : scheduleParams(spec))
    if (!sweepCandidates(*param).empty()) axes.push_back({param->name, sweepCandidates(*param)});
  if (axes.empty())
    throw Error(fmt::format(
        "sweep: {} declares no schedule parameters to sweep; name some with --param NAME=v1,v2,...",
        spec.name));
  return axes;
}

std::vector<SweepPoint> expandGrid(const KernelSpec& spec, const std::vector<SweepAxis>& axes) {
  int64_t count = 1;
  std::set<std::string> named;
  for (const SweepAxis& axis : axes) {
    if (!named.insert(axis.param).second)
      throw Error(fmt::format("sweep: --param {} is given twice", axis.param));
    if (std::set<std::string>(axis.values.begin(), axis.values.end()).size() != axis.values.size())
      throw Error(fmt::format("sweep: --param {} repeats a value", axis.param));
    for (const std::string& value : axis.values) checkValue(spec, axis.param, value);
    count *= static_cast<int64_t>(axis.values.size());
    if (count > kMaxSweepPoints)
      throw Error(fmt::format(
          "sweep: the grid of {} parameters has more than {} configurations; sweep fewer "
          "parameters or values (--param NAME=V1,V2,...)",
          axes.size(), kMaxSweepPoints));
  }
  std::vector<SweepPoint> points;
  points.reserve(static_cast<size_t>(count));
  for (int64_t index = 0; index < count; ++index) {
    SweepPoint point;
    point.index = index;
    int64_t rest = index;
    point.params.resize(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {
      const int64_t n = static_cast<int64_t>(axes[a].values.size());
      point.params[a] = {axes[a].param, axes[a].values[static_cast<size_t>(rest % n)]};
      rest /= n;
    }
    points.push_back(std::move(point));
  }
  return points;
}

Shard parseShard(const std::string& text) {
  const auto parts = split(text, '/');
  const int64_t index = parts.size() == 2 ? positive(parts[0]) : 0;
  const int64_t count = parts.size() == 2 ? positive(parts[1]) : 0;
  if (index < 1 || count < 1 || index > count)
    throw Error(fmt::format("sweep: --shard takes I/N with 1 <= I <= N, not '{}'", text));
  return {index, count};
}

std::vector<SweepPoint> shardOf(const std::vector<SweepPoint>& points, Shard shard) {
  std::vector<SweepPoint> out;
  for (const SweepPoint& p : points)
    if (p.index % shard.count == shard.index - 1) out.push_back(p);
  return out;
}

}  // namespace neuronsim::kernels
