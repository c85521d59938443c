#pragma once
// numpy arrays <-> host tensors (C-order fp32 values).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "kernels/registry.h"

namespace neuronsim::python {

/// A C-order fp32 copy of `array` (any real numpy dtype or sequence; converted). Throws
/// neuronsim::Error naming `name` when it is not numeric.
kernels::HostTensor hostTensorFrom(const pybind11::handle& array, const std::string& name);
/// A new float32 numpy array with `tensor`'s shape and values.
pybind11::array_t<float> numpyFrom(const kernels::HostTensor& tensor);
/// name -> numpy array.
pybind11::dict numpyDict(const kernels::HostTensors& tensors);

}  // namespace neuronsim::python
