// Input shapes from files, flags, derivation and defaults; then input values.
#include "kernels/harness/run_inputs.h"

#include <fmt/format.h>

#include <set>

#include "isa/error.h"
#include "isa/npy.h"
#include "kernels/harness/run_kernel.h"

namespace neuronsim::kernels {

namespace {

bool hasInput(const KernelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.inputs)
    if (t.name == name) return true;
  return false;
}

std::string inputNames(const KernelSpec& spec) {
  std::vector<std::string> names;
  for (const TensorSpec& t : spec.inputs) names.push_back(t.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

ShapeMap resolveInputShapes(const KernelSpec& spec, const InputRequest& request,
                            const ParamValues& params) {
  ShapeMap known;
  for (const auto& [name, path] : request.files) {
    if (!hasInput(spec, name))
      throw Error(fmt::format("{} has no input named '{}' (inputs: {})", spec.name, name,
                              inputNames(spec)));
    if (known.count(name)) throw Error(fmt::format("--input {} given twice", name));
    known[name] = isa::readNpyHeader(path).shape;
  }
  for (const auto& [name, array] : request.arrays) {
    if (!hasInput(spec, name))
      throw Error(fmt::format("{} has no input named '{}' (inputs: {})", spec.name, name,
                              inputNames(spec)));
    if (known.count(name)) throw Error(fmt::format("{} is given twice", name));
    known[name] = array.shape;
  }
  for (const auto& [name, shape] : request.shapes) {
    if (!hasInput(spec, name))
      throw Error(fmt::format("{} has no input named '{}' (inputs: {})", spec.name, name,
                              inputNames(spec)));
    for (const auto& [file, path] : request.files)
      if (file == name) throw Error(fmt::format("{} has both --input and --shape", name));
    if (request.arrays.count(name))
      throw Error(fmt::format("{}: {} is both given and shaped", spec.name, name));
    if (known.count(name)) throw Error(fmt::format("--shape {} given twice", name));
    known[name] = shape;
  }
  ShapeMap shapes = known;
  if (spec.deriveShapes)
    for (const auto& [name, shape] : spec.deriveShapes(known, params)) shapes.emplace(name, shape);
  if (request.files.empty() && request.arrays.empty())
    for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
  return shapes;
}

HostTensors loadInputs(const KernelSpec& spec, InputRequest request, const ShapeMap& shapes,
                       isa::Dtype dtype, const ParamValues& params) {
  ShapeMap generatedShapes = shapes;
  for (const auto& [name, path] : request.files) generatedShapes.erase(name);
  for (const auto& [name, array] : request.arrays) generatedShapes.erase(name);
  HostTensors inputs = generateInputs(spec, generatedShapes, request.seed);
  for (const auto& [name, path] : request.files) {
    isa::NpyArray array = isa::readNpy(path);
    if (array.shape != shapes.at(name))
      throw Error(fmt::format("--input {}: {} changed while the run started", name, path));
    inputs[name] = HostTensor{std::move(array.shape), std::move(array.values)};
  }
  for (auto& [name, array] : request.arrays) inputs[name] = std::move(array);
  roundInPlace(inputs, dtype);
  if (spec.completeInputs) {
    std::set<std::string> generated;
    for (const auto& [name, shape] : generatedShapes) generated.insert(name);
    spec.completeInputs(inputs, generated, params);
  }
  return inputs;
}

HostTensors shapesOnly(const ShapeMap& shapes) {
  HostTensors tensors;
  for (const auto& [name, shape] : shapes) tensors[name] = HostTensor{shape, {}};
  return tensors;
}

}  // namespace neuronsim::kernels
