// The ISA's enums as Python enums, named as in the assembly.
#include <pybind11/pybind11.h>

#include <deque>
#include <string>

#include "isa/dtype.h"
#include "isa/instruction.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace neuronsim::python {

namespace {

/// Binds enum E with the values 0..count-1, each named by `name(value)`.
template <typename E, typename NameFn>
void bindEnum(py::module_& m, const char* pyName, int count, NameFn name) {
  py::enum_<E> e(m, pyName);
  for (int i = 0; i < count; ++i) {
    static std::deque<std::string> keep;  // stable, NUL-terminated names
    keep.emplace_back(name(static_cast<E>(i)));
    e.value(keep.back().c_str(), static_cast<E>(i));
  }
}

}  // namespace

void bindIsa(py::module_& m) {
  bindEnum<isa::Dtype>(m, "Dtype", isa::kNumDtypes, isa::dtypeName);
  bindEnum<isa::Engine>(m, "Engine", isa::kNumEngines, isa::engineName);
  bindEnum<isa::AluOp>(m, "AluOp", static_cast<int>(isa::AluOp::IsGe) + 1, isa::aluOpName);
  bindEnum<isa::ActFn>(m, "ActFn", static_cast<int>(isa::ActFn::Reciprocal) + 1, isa::actFnName);
  m.def("dtype_bytes", &isa::dtypeBytes, "bytes per element of a dtype");
}

}  // namespace neuronsim::python
