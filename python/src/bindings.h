#pragma once
// The parts of the neuronsim._core extension, each bound by its own file.

#include <pybind11/pybind11.h>

namespace neuronsim::python {

void bindIsa(pybind11::module_& m);      // dtypes, engines, ALU ops, activation functions
void bindViews(pybind11::module_& m);    // HBM tensor views and SBUF/PSUM tiles
void bindBuilder(pybind11::module_& m);  // the kernel builder as Python kernels see it
void bindRun(pybind11::module_& m);      // kernel specs, runs, results and traces

}  // namespace neuronsim::python
