#pragma once
// Forced schedule parameters that change nothing: the kernel builds the same program without them.

#include <string>
#include <utility>
#include <vector>

#include "isa/geometry.h"
#include "kernels/harness/run_kernel.h"

namespace neuronsim::kernels {

/// A schedule parameter forced to a value that changes nothing here.
struct IneffectiveParam {
  std::string name;                 ///< API name
  std::string value;                ///< as given
  std::vector<std::string> others;  ///< the values that build the same program: auto, ...
};

/// For each schedule parameter `texts` (API name -> text, as given) forces to a value other than
/// auto, builds the kernel again with auto and with every other value a sweep tries (an enum's
/// choices); when every one of those programs is the same as `program`, the one `texts` build
/// (sameProgram: notes aside), the parameter has no effect. A value that does not build counts
/// as a change. Builds nothing when no schedule parameter is forced; unless `always`, checks no
/// program of more than kEffectCheckInstructions (each comparison is a whole build).
std::vector<IneffectiveParam> ineffectiveScheduleParams(
    const KernelSpec& spec, const std::vector<std::pair<std::string, std::string>>& texts,
    const KernelShapes& shapes, isa::Dtype dtype, const isa::Geometry& geometry,
    const isa::Program& program, bool always);

/// Programs up to this many instructions are checked on every run; larger ones under --strict.
inline constexpr size_t kEffectCheckInstructions = 5000;

/// "--slot-copies on has no effect here (auto and off build the same program)"; with
/// `pythonNames` "slot_copies='on' has ...".
std::string ineffectiveText(const IneffectiveParam& param, bool pythonNames);

}  // namespace neuronsim::kernels
