// Forced schedule parameters that change nothing: the kernel builds the same program without them.
#include "kernels/harness/schedule_effect.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"
#include "kernels/harness/program_identity.h"

namespace neuronsim::kernels {

namespace {

using ParamTexts = std::vector<std::pair<std::string, std::string>>;

/// The values `param` is compared against: auto, then what a sweep tries, without `given`.
std::vector<std::string> otherValues(const ParamSpec& param, const std::string& given) {
  std::vector<std::string> values = {kAuto};
  for (const std::string& v : sweepCandidates(param))
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  values.erase(std::remove(values.begin(), values.end(), given), values.end());
  return values;
}

std::string valueList(const std::vector<std::string>& values) {
  if (values.size() == 1) return values[0];
  std::vector<std::string> head(values.begin(), values.end() - 1);
  return fmt::format("{} and {}", fmt::join(head, ", "), values.back());
}

}  // namespace

std::vector<IneffectiveParam> ineffectiveScheduleParams(
    const KernelSpec& spec, const ParamTexts& texts, const KernelShapes& shapes, isa::Dtype dtype,
    const isa::Geometry& geometry, const isa::Program& program, bool always) {
  std::vector<std::pair<size_t, const ParamSpec*>> forced;  // index in texts, parameter
  for (size_t i = 0; i < texts.size(); ++i)
    for (const ParamSpec& p : spec.params)
      if (p.name == texts[i].first && p.schedule && texts[i].second != kAuto)
        forced.emplace_back(i, &p);
  std::vector<IneffectiveParam> found;
  if (forced.empty()) return found;
  const auto build = [&](const ParamTexts& given) {
    return buildKernel(spec, parseParams(spec, given), shapes, dtype, geometry);
  };
  if (!always && program.instructions.size() > kEffectCheckInstructions) return found;
  for (const auto& [index, param] : forced) {
    std::vector<std::string> others = otherValues(*param, texts[index].second);
    bool same = !others.empty();
    for (size_t k = 0; k < others.size() && same; ++k) {
      ParamTexts changed = texts;
      changed[index].second = others[k];
      try {
        same = sameProgram(build(changed), program);
      } catch (const Error&) {
        same = false;  // refused with that value: the parameter matters here
      }
    }
    if (same) found.push_back({param->name, texts[index].second, std::move(others)});
  }
  return found;
}

std::string ineffectiveText(const IneffectiveParam& param, bool pythonNames) {
  const std::string given = pythonNames ? fmt::format("{}='{}'", param.name, param.value)
                                        : fmt::format("--{} {}", flagName(param.name), param.value);
  return fmt::format("{} has no effect here ({} build{} the same program)", given,
                     valueList(param.others), param.others.size() == 1 ? "s" : "");
}

}  // namespace neuronsim::kernels
