#pragma once
// The kernel registry: every kernel's tensors, parameters, shapes, program and reference.

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "isa/dtype.h"
#include "isa/shape_text.h"
#include "kernels/builder/kernel_builder.h"

namespace neuronsim::kernels {

using Shape = std::vector<int64_t>;
/// Tensor name -> shape.
using ShapeMap = std::map<std::string, Shape>;

/// A host tensor: shape and C-order fp32 values.
struct HostTensor {
  Shape shape;
  std::vector<float> values;
};
/// Tensor name -> host tensor.
using HostTensors = std::map<std::string, HostTensor>;

enum class ParamType { Int, Int3, Int6, Bool, String, Enum };
std::string_view paramTypeName(ParamType type);  // int, int3, int6, bool, string, enum

/// One kernel parameter, named as in the API (snake_case); the CLI flag is kebab-case.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  std::string defaultValue;  ///< text as on the command line; empty: unset (kernel decides)
  std::string meaning;
  std::vector<std::string> choices;  ///< Enum only
  /// A schedule choice (tile size, buffer count, queue spread, engine), not semantics: it
  /// changes the time, never the result. Its default is usually kAuto; `neuronsim sweep`
  /// varies it and `run KERNEL --help` lists it under "Schedule parameters".
  bool schedule = false;
  /// Schedule parameters: the values `neuronsim sweep` tries when the parameter is not given
  /// values (`--param NAME`, or no --param at all); empty for an enum: its choices.
  std::vector<std::string> candidates = {};
  /// Int parameters: the values that mean something, lo..hi, and at most machineHi(geometry)
  /// when set (a machine's PSUM banks, its DMA queues). A given value outside is an error
  /// whether or not the run reads the parameter (parseParams checks lo and hi, buildKernel
  /// machineHi): a value that means nothing is refused, a valid one a run ignores only warns.
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  std::function<int64_t(const isa::Geometry&)> machineHi = nullptr;
  std::string machineHiMeaning = "";  ///< what machineHi is: "the machine's PSUM banks"

  /// This parameter, taking lo..hi.
  ParamSpec within(int64_t low, int64_t high = std::numeric_limits<int64_t>::max()) const;
  /// This parameter, taking low up to what the machine allows, `meaning`.
  ParamSpec within(int64_t low, std::function<int64_t(const isa::Geometry&)> high,
                   std::string meaning) const;
  /// This parameter, taking 1 up to the machine's PSUM banks.
  ParamSpec withinPsumBanks() const;
};

/// The value of a schedule parameter that lets the kernel choose ("auto").
inline const std::string kAuto = "auto";

/// A schedule parameter defaulting to auto (read it with ParamValues::intOr, or for an enum
/// whose choices include auto, getString). `candidates`: what a sweep tries (auto included
/// automatically for non-enums).
ParamSpec scheduleParam(std::string name, ParamType type, std::string meaning,
                        std::vector<std::string> candidates, std::vector<std::string> choices = {});

/// One input or output tensor.
struct TensorSpec {
  std::string name;
  std::string meaning;
  bool optional = false;
};

using ParamValue =
    std::variant<int64_t, std::array<int64_t, 3>, std::array<int64_t, 6>, bool, std::string>;

/// Parsed parameter values. Getters throw neuronsim::Error for an unset or mistyped name.
class ParamValues {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, ParamValue value) { values_[name] = std::move(value); }
  /// Unsets `name` (a schedule parameter given as auto).
  void erase(const std::string& name) { values_.erase(name); }
  /// A schedule parameter's int value, or `autoValue` when it is auto (unset). Its declared
  /// range (ParamSpec::lo, hi, machineHi) was checked by parseParams and buildKernel.
  int64_t intOr(const std::string& name, int64_t autoValue) const {
    return has(name) ? getInt(name) : autoValue;
  }
  int64_t getInt(const std::string& name) const;
  std::array<int64_t, 3> getInt3(const std::string& name) const;
  std::array<int64_t, 6> getInt6(const std::string& name) const;
  bool getBool(const std::string& name) const;
  /// String and Enum parameters.
  const std::string& getString(const std::string& name) const;
  const std::map<std::string, ParamValue>& all() const { return values_; }

 private:
  const ParamValue& at(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
};

/// What a build function gets: parameters, dtype and the declared HBM tensors.
struct KernelArgs {
  const ParamValues& params;
  isa::Dtype dtype;                        ///< the kernel dtype (inputs are stored in it)
  std::map<std::string, HbmView> inputs;   ///< the inputs given (absent optionals missing)
  std::map<std::string, HbmView> outputs;  ///< the outputs inferShapes produced
  /// The input/output named `name`; throws neuronsim::Error when absent.
  const HbmView& in(const std::string& name) const;
  const HbmView& out(const std::string& name) const;
  bool hasInput(const std::string& name) const { return inputs.count(name) != 0; }
  bool hasOutput(const std::string& name) const { return outputs.count(name) != 0; }
};

/// A kernel: everything `neuronsim run`, `neuronsim list` and the tests need.
struct KernelSpec {
  std::string name;
  std::string description;  ///< one line
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<ParamSpec> params;
  /// Shapes of the inputs generated when none is given (an optional input left out here is
  /// absent by default).
  ShapeMap defaultShapes;
  /// Optional: completes the shapes `neuronsim run` generates from those given (--shape) and
  /// the parameters, before defaultShapes fill the rest (a backward kernel derives grad_output
  /// from input_tensor, data_format and the window). Null: defaultShapes only.
  std::function<ShapeMap(const ShapeMap& given, const ParamValues& params)> deriveShapes;
  /// Optional: recomputes generated inputs that are functions of the others (max pooling's
  /// output_tensor is the forward maximum of input_tensor), so a run without files is
  /// meaningful. `generated` names the inputs not read from files; values are already in the
  /// kernel dtype.
  std::function<void(HostTensors& inputs, const std::set<std::string>& generated,
                     const ParamValues& params)>
      completeInputs;
  /// Checks parameters against the input shapes and returns the shape of every output the
  /// kernel produces. Throws neuronsim::Error "<kernel>: <culprit> <rule>".
  std::function<ShapeMap(const ShapeMap& inputs, const ParamValues& params)> inferShapes;
  /// Emits the program (inputs and outputs are already declared in `args`).
  std::function<void(KernelBuilder& builder, const KernelArgs& args)> build;
  /// Plain C++ reference on fp32 values (inputs already rounded to the kernel dtype).
  std::function<HostTensors(const HostTensors& inputs, const ParamValues& params)> reference;
  /// Useful flops (2 per MAC) for MFU and the roofline; null: 0.
  std::function<double(const ShapeMap& inputs, const ParamValues& params)> flops;
  /// Optional: HBM bytes the kernel must move at minimum (the roofline's memory term) for
  /// these input and output shapes and parameters at kernel dtype `dtype`: only the elements
  /// whose values it needs, each once. Null: every input and output once.
  std::function<int64_t(const ShapeMap& inputs, const ShapeMap& outputs, const ParamValues& params,
                        isa::Dtype dtype)>
      rooflineBytes;
  /// Outputs are fp32 whatever the kernel dtype (otherwise they have the kernel dtype).
  bool fp32Outputs = false;
  /// Fewest partitions, and PE array rows and columns, the kernel's tiling supports: buildKernel
  /// refuses a machine with fewer before building. The Trn2 count until a kernel takes its tiling
  /// from the geometry (partitions, peTile; then 1).
  int32_t minPartitions = isa::Geometry{}.partitions;
};

/// Every registered kernel, in `neuronsim list` order.
const std::vector<KernelSpec>& kernelRegistry();
/// The kernel named `name`; throws neuronsim::Error "unknown kernel 'x' (known: ...)".
const KernelSpec& findKernel(const std::string& name);

/// Parses parameter texts (API names, snake_case) into typed values, filling defaults.
/// An int3 accepts "2" (broadcast) or "2,2,3"; an int6 accepts 1, 3 (lo = hi per axis) or 6
/// values. A schedule parameter accepts "auto" (left unset for the kernel to resolve) unless it
/// is an enum with an "auto" choice, which keeps the text. Throws neuronsim::Error naming the
/// kernel, the parameter and the rule.
ParamValues parseParams(const KernelSpec& spec,
                        const std::vector<std::pair<std::string, std::string>>& given);
/// Throws neuronsim::Error "KERNEL: NAME V is not in LO..HI (HI: MEANING)" for a given int
/// parameter above its machineHi on `geometry`.
void checkMachineRanges(const KernelSpec& spec, const ParamValues& params,
                        const isa::Geometry& geometry);
/// The kernel's schedule parameters, in declaration order.
std::vector<const ParamSpec*> scheduleParams(const KernelSpec& spec);
/// The values a sweep tries for `param`: its candidates, else an enum's choices; empty when it
/// declares none.
std::vector<std::string> sweepCandidates(const ParamSpec& param);
/// `param_name` -> `--param-name`.
std::string flagName(const std::string& paramName);

/// Element count of a shape.
int64_t shapeElements(const Shape& shape);
/// "[1,8,4,4,4]" (isa::shapeString, under the name the kernels use).
inline std::string shapeText(const Shape& shape) {
  return isa::shapeString(shape);
}

}  // namespace neuronsim::kernels
