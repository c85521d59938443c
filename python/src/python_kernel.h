#pragma once
// A KernelSpec whose program and reference are Python functions.

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace neuronsim::python {

/// What neuronsim.kernel knows about a Python kernel.
struct PythonKernelDef {
  std::string name;
  std::string description;
  std::vector<kernels::TensorSpec> inputs;
  std::vector<kernels::ParamSpec> params;
  kernels::ShapeMap defaultShapes;
  /// build(builder: Builder, inputs: {name: HbmTensor}, params: {name: value}); declares the
  /// outputs itself.
  pybind11::function build;
  /// None, or reference(inputs: {name: ndarray}, params: {name: value}) -> {name: ndarray}.
  pybind11::object reference;
};

/// The spec `neuronsim run` and neuronsim.run use: no inferShapes outputs (the build declares
/// them), build and reference call into Python (the GIL is held throughout a run).
std::shared_ptr<kernels::KernelSpec> makePythonKernel(PythonKernelDef def);

/// Parameter values as Python objects (int, tuple, bool, str).
pybind11::dict paramsToPython(const kernels::ParamValues& params);

}  // namespace neuronsim::python
