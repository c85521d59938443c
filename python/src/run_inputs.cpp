// Given and generated inputs of a run, rounded to the kernel dtype.
#include "python/src/run_inputs.h"

#include <set>
#include <string>

#include "isa/error.h"
#include "kernels/harness/run_kernel.h"

namespace neuronsim::python {

kernels::HostTensors prepareInputs(const kernels::KernelSpec& spec, kernels::HostTensors given,
                                   const kernels::ShapeMap& shapes, uint64_t seed, isa::Dtype dtype,
                                   const kernels::ParamValues& params) {
  kernels::ShapeMap generatedShapes = shapes;
  for (const auto& [name, unused] : generatedShapes) {
    bool known = false;
    for (const kernels::TensorSpec& t : spec.inputs) known = known || t.name == name;
    if (!known) throw Error(spec.name + " has no input named '" + name + "'");
    if (given.count(name)) throw Error(spec.name + ": " + name + " is both given and shaped");
  }
  kernels::ShapeMap known = generatedShapes;
  for (const auto& [name, tensor] : given) known[name] = tensor.shape;
  if (spec.deriveShapes)
    for (const auto& [name, shape] : spec.deriveShapes(known, params))
      if (!known.count(name)) generatedShapes.emplace(name, shape);
  if (given.empty())
    for (const auto& [name, shape] : spec.defaultShapes) generatedShapes.emplace(name, shape);
  kernels::HostTensors inputs = kernels::generateInputs(spec, generatedShapes, seed);
  for (auto& [name, tensor] : given) inputs[name] = std::move(tensor);
  inputs = kernels::roundedTo(inputs, dtype);
  if (spec.completeInputs) {
    std::set<std::string> generated;
    for (const auto& [name, shape] : generatedShapes) generated.insert(name);
    spec.completeInputs(inputs, generated, params);
  }
  return inputs;
}

}  // namespace neuronsim::python
