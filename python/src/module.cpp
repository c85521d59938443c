// neuronsim._core: the C++ builder, registry, harness and simulator for the Python package.
#include <pybind11/pybind11.h>

#include "isa/error.h"
#include "python/src/bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "neuronsim's C++ core: builder, kernel registry, harness, simulator and traces";
  pybind11::register_exception<neuronsim::Error>(m, "Error", PyExc_ValueError);
  neuronsim::python::bindIsa(m);
  neuronsim::python::bindViews(m);
  neuronsim::python::bindBuilder(m);
  neuronsim::python::bindRun(m);
}
