// KernelSpecs built and checked by Python functions.
#include "python/src/python_kernel.h"

#include <pybind11/stl.h>

#include <variant>

#include "python/src/host_arrays.h"
#include "python/src/py_builder.h"

namespace py = pybind11;

namespace neuronsim::python {

py::dict paramsToPython(const kernels::ParamValues& params) {
  py::dict d;
  for (const auto& [name, value] : params.all())
    d[py::str(name)] = std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
  return d;
}

std::shared_ptr<kernels::KernelSpec> makePythonKernel(PythonKernelDef def) {
  auto spec = std::make_shared<kernels::KernelSpec>();
  spec->name = def.name;
  spec->description = def.description;
  spec->inputs = def.inputs;
  spec->params = def.params;
  spec->defaultShapes = def.defaultShapes;
  spec->inferShapes = [](const kernels::ShapeMap&, const kernels::ParamValues&) {
    return kernels::ShapeMap{};
  };
  spec->build = [build = def.build](kernels::KernelBuilder& builder,
                                    const kernels::KernelArgs& args) {
    BuildScope scope(builder);
    py::dict inputs;
    for (const auto& [name, view] : args.inputs) inputs[py::str(name)] = view;
    build(scope.handle(), inputs, paramsToPython(args.params));
  };
  if (!def.reference.is_none())
    spec->reference = [reference = def.reference](const kernels::HostTensors& inputs,
                                                  const kernels::ParamValues& params) {
      py::dict out = reference(numpyDict(inputs), paramsToPython(params));
      kernels::HostTensors result;
      for (const auto& [name, array] : out)
        result[name.cast<std::string>()] = hostTensorFrom(array, name.cast<std::string>());
      return result;
    };
  return spec;
}

}  // namespace neuronsim::python
