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

/// Why `spec`'s default shapes do not fit `shapes` (the inputs known so far, defaults filling
/// the rest), without the kernel's name; empty when they fit.
std::string defaultMisfit(const KernelSpec& spec, ShapeMap shapes, const ParamValues& params) {
  for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
  try {
    spec.inferShapes(shapes, params);
  } catch (const Error& e) {
    const std::string text = e.what(), prefix = fmt::format("{}: ", spec.name);
    return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
  }
  return "";
}

/// "AxBxC" with `axes` letters.
std::string placeholder(size_t axes) {
  std::string text;
  for (size_t i = 0; i < axes && i < 26; ++i)
    text += fmt::format("{}{}", i ? "x" : "", char('A' + i));
  return text;
}

/// "KERNEL: input NAME is required: give ..." naming the flags (or keywords) that give it and
/// the shape: its default when that fits the inputs known so far (`shapes`).
std::string requiredText(const KernelSpec& spec, const std::string& name,
                         const InputRequest& request, const ShapeMap& shapes,
                         const ParamValues& params) {
  const auto found = spec.defaultShapes.find(name);
  const Shape shape = found == spec.defaultShapes.end() ? Shape{} : found->second;
  const std::string misfit = shape.empty() ? "" : defaultMisfit(spec, shapes, params);
  const bool py = request.pythonNames;
  const auto text = [&](const Shape& s) {
    if (py) return fmt::format("({}{})", fmt::join(s, ", "), s.size() == 1 ? "," : "");
    return fmt::format("{}", fmt::join(s, "x"));
  };
  std::string dims = py ? "(...)" : "AxBxC", why;
  if (!shape.empty() && misfit.empty()) {
    dims = text(shape);
    why = py ? " (its default shape: defaults apply only when no tensor is given)"
             : " (its default shape: defaults apply only when no --input is given)";
  } else if (!shape.empty()) {
    if (!py) dims = placeholder(shape.size());
    why = fmt::format(" (its default {} does not fit: {})", text(shape), misfit);
  }
  if (py)
    return fmt::format("{}: input {} is required: pass {}=ARRAY or shapes={{'{}': {}}}{}",
                       spec.name, name, name, name, dims, why);
  return fmt::format("{}: input {} is required: give --input {}=FILE.npy or --shape {}={}{}",
                     spec.name, name, name, name, dims, why);
}

/// Rethrows a shape misfit naming the inputs that took their default shapes beside the given
/// ones (`conv3d: filters has C_in 128 but x_in has 4 channels (filters took its default shape
/// 3x3x3x128x128)`): the default is the likely culprit, and nothing else says it was used.
void checkDefaultsFit(const KernelSpec& spec, const ShapeMap& shapes, const ParamValues& params,
                      const std::vector<std::string>& defaulted) {
  try {
    spec.inferShapes(shapes, params);
  } catch (const Error& e) {
    std::vector<std::string> taken;
    for (const std::string& name : defaulted)
      taken.push_back(
          fmt::format("{} took its default shape {}", name, fmt::join(shapes.at(name), "x")));
    throw Error(fmt::format("{} ({})", e.what(), fmt::join(taken, ", ")));
  }
}

}  // namespace

ShapeMap givenInputShapes(const KernelSpec& spec, const InputRequest& request) {
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
  return known;
}

ShapeMap resolveInputShapes(const KernelSpec& spec, const InputRequest& request,
                            const ParamValues& params) {
  const ShapeMap known = givenInputShapes(spec, request);
  ShapeMap shapes = known;
  if (spec.deriveShapes)
    for (const auto& [name, shape] : spec.deriveShapes(known, params)) shapes.emplace(name, shape);
  if (request.files.empty() && request.arrays.empty())
    for (const auto& [name, shape] : spec.defaultShapes) shapes.emplace(name, shape);
  for (const TensorSpec& t : spec.inputs)
    if (!t.optional && !shapes.count(t.name))
      throw Error(requiredText(spec, t.name, request, shapes, params));
  std::vector<std::string> defaulted;  // not given, and of the default shape (taken or derived)
  for (const auto& [name, shape] : spec.defaultShapes) {
    const auto found = shapes.find(name);
    if (!known.count(name) && found != shapes.end() && found->second == shape)
      defaulted.push_back(name);
  }
  if (!known.empty() && !defaulted.empty()) checkDefaultsFit(spec, shapes, params, defaulted);
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
