// numpy arrays <-> host tensors.
#include "python/src/host_arrays.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"

namespace py = pybind11;

namespace neuronsim::python {

kernels::HostTensor hostTensorFrom(const py::handle& array, const std::string& name) {
  py::array_t<float, py::array::c_style | py::array::forcecast> a;
  try {
    a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  } catch (const py::error_already_set&) {
  }
  if (!a) throw Error(fmt::format("{} is not a numeric array", name));
  kernels::HostTensor t;
  t.shape.assign(a.shape(), a.shape() + a.ndim());
  t.values.assign(a.data(), a.data() + a.size());
  return t;
}

py::array_t<float> numpyFrom(const kernels::HostTensor& tensor) {
  py::array_t<float> a(std::vector<py::ssize_t>(tensor.shape.begin(), tensor.shape.end()));
  std::copy(tensor.values.begin(), tensor.values.end(), a.mutable_data());
  return a;
}

py::dict numpyDict(const kernels::HostTensors& tensors) {
  py::dict d;
  for (const auto& [name, tensor] : tensors) d[py::str(name)] = numpyFrom(tensor);
  return d;
}

}  // namespace neuronsim::python
