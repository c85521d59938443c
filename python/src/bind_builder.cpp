// The builder's methods for the Python layer (neuronsim.isa / neuronsim.language wrap them
// with NKI names, source-line notes and errors that name the kernel's line).
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/validation.h"
#include "python/src/bindings.h"
#include "python/src/py_builder.h"

namespace py = pybind11;

namespace neuronsim::python {

using isa::ActFn;
using isa::AluOp;
using isa::Engine;
using kernels::DmaOperand;
using kernels::HbmView;
using kernels::KernelBuilder;
using kernels::ScalarArg;
using kernels::Tile;

KernelBuilder& PyBuilder::get() const {
  if (!session_->builder)
    throw Error("this kernel's build has ended; its builder cannot be used any more");
  return *session_->builder;
}

PyTile PyBuilder::allocate(isa::Space space, const std::vector<int64_t>& shape, isa::Dtype dtype,
                           const std::string& name) {
  KernelBuilder& b = get();
  Tile tile = space == isa::Space::Psum ? b.psum(shape, dtype, name) : b.sbuf(shape, dtype, name);
  return PyTile{tile, std::make_shared<Allocation>(session_, tile)};
}

namespace {

/// An HbmTensor or a Tile as a DMA side.
DmaOperand dmaOperand(const py::handle& obj, const char* what) {
  if (py::isinstance<HbmView>(obj)) return DmaOperand(obj.cast<const HbmView&>());
  if (py::isinstance<PyTile>(obj)) return DmaOperand(obj.cast<const PyTile&>().tile);
  throw Error(fmt::format("{} must be an HBM tensor or a tile, not {}", what,
                          std::string(py::str(py::type::of(obj).attr("__name__")))));
}

/// A number or a [P, 1] tile.
ScalarArg scalarArg(const py::handle& obj) {
  if (py::isinstance<PyTile>(obj)) return ScalarArg(obj.cast<const PyTile&>().tile);
  return ScalarArg(obj.cast<double>());
}

std::optional<Tile> optionalTile(const std::optional<PyTile>& t) {
  return t ? std::optional<Tile>(t->tile) : std::nullopt;
}

/// affine(p, i) over `dst`'s free axes with per-axis `steps`.
isa::Affine affineOver(const Tile& dst, const std::vector<int64_t>& steps, int64_t offset,
                       int64_t channelMultiplier) {
  if (steps.size() != dst.shape().size())
    throw Error(fmt::format("the pattern has {} steps but tile '{}' has {} free axes", steps.size(),
                            dst.name(), dst.shape().size()));
  isa::Affine affine;
  for (size_t i = 0; i < steps.size(); ++i)
    affine.pattern.push_back(isa::Dim{steps[i], dst.shape()[i]});
  affine.offset = offset;
  affine.channelMultiplier = channelMultiplier;
  return affine;
}

}  // namespace

void bindBuilder(py::module_& m) {
  py::class_<PyBuilder>(m, "Builder",
                        "the kernel builder of one build (neuronsim.language wraps it)")
      .def_property_readonly("kernel_name", [](const PyBuilder& b) { return b.get().kernelName(); })
      .def_property_readonly("partitions",
                             [](const PyBuilder& b) { return b.get().geometry().partitions; })
      .def_property_readonly("instruction_count",
                             [](const PyBuilder& b) { return b.get().instructionCount(); })
      .def_property_readonly("sbuf_bytes_free",
                             [](const PyBuilder& b) { return b.get().sbufBytesFree(); })
      .def_property_readonly("sbuf_bytes_in_use",
                             [](const PyBuilder& b) { return b.get().sbufBytesInUse(); })
      .def_property_readonly("psum_bytes_in_use",
                             [](const PyBuilder& b) { return b.get().psumBytesInUse(); })
      .def("set_note", [](PyBuilder& b, std::string note) { b.get().setNote(std::move(note)); })
      .def("set_auto_sync", [](PyBuilder& b, bool on) { b.get().setAutoSync(on); })
      .def(
          "validate_from",
          [](const PyBuilder& b, int64_t first) {
            const KernelBuilder& kb = b.get();
            for (int64_t i = first; i < kb.instructionCount(); ++i)
              isa::validateInstruction(kb.program(), i, kb.geometry());
          },
          "checks the instructions from index `first` on against the hardware rules")
      .def("sbuf",
           [](PyBuilder& b, const std::vector<int64_t>& shape, isa::Dtype dtype,
              const std::string& name) { return b.allocate(isa::Space::Sbuf, shape, dtype, name); })
      .def("psum",
           [](PyBuilder& b, const std::vector<int64_t>& shape, isa::Dtype dtype,
              const std::string& name) { return b.allocate(isa::Space::Psum, shape, dtype, name); })
      .def("output", [](PyBuilder& b, const std::string& name, const std::vector<int64_t>& shape,
                        isa::Dtype dtype) { return b.get().output(name, shape, dtype); })
      .def("internal", [](PyBuilder& b, const std::string& name, const std::vector<int64_t>& shape,
                          isa::Dtype dtype) { return b.get().internal(name, shape, dtype); })
      .def("set_dma_queues", [](PyBuilder& b, const std::vector<int32_t>& queues,
                                Engine issue) { b.get().setDmaQueues(queues, issue); })
      .def("dma_copy",
           [](PyBuilder& b, const py::object& dst, const py::object& src, int32_t queue,
              Engine issue) {
             b.get().dmaCopy(dmaOperand(dst, "dst"), dmaOperand(src, "src"), {queue, issue});
           })
      .def("dma_transpose",
           [](PyBuilder& b, const py::object& dst, const py::object& src, int32_t queue,
              Engine issue) {
             b.get().dmaTranspose(dmaOperand(dst, "dst"), dmaOperand(src, "src"), {queue, issue});
           })
      .def("matmul",
           [](PyBuilder& b, const PyTile& dst, const PyTile& stationary, const PyTile& moving,
              bool accumulate) {
             b.get().matmul(dst.tile, stationary.tile, moving.tile, accumulate);
           })
      .def("transpose", [](PyBuilder& b, const PyTile& dst, const PyTile& src,
                           Engine engine) { b.get().transpose(dst.tile, src.tile, engine); })
      .def("activation",
           [](PyBuilder& b, const PyTile& dst, const PyTile& src, ActFn fn, const py::object& scale,
              const std::optional<PyTile>& bias, const std::optional<PyTile>& reduceDst) {
             b.get().activation(dst.tile, src.tile, fn, scalarArg(scale), optionalTile(bias),
                                optionalTile(reduceDst));
           })
      .def("tensor_tensor",
           [](PyBuilder& b, const PyTile& dst, const PyTile& x, const PyTile& y, AluOp op,
              Engine engine) { b.get().tensorTensor(dst.tile, x.tile, y.tile, op, engine); })
      .def("tensor_scalar",
           [](PyBuilder& b, const PyTile& dst, const PyTile& src, AluOp op0,
              const py::object& operand0, AluOp op1, const py::object& operand1, Engine engine,
              bool reverse0, bool reverse1) {
             b.get().tensorScalar(dst.tile, src.tile, op0, scalarArg(operand0), op1,
                                  scalarArg(operand1), engine, reverse0, reverse1);
           })
      .def("scalar_tensor_tensor",
           [](PyBuilder& b, const PyTile& dst, const PyTile& data, AluOp op0,
              const py::object& operand0, AluOp op1, const PyTile& tensor, Engine engine) {
             b.get().scalarTensorTensor(dst.tile, data.tile, op0, scalarArg(operand0), op1,
                                        tensor.tile, engine);
           })
      .def("tensor_reduce",
           [](PyBuilder& b, const PyTile& dst, const PyTile& src, AluOp op, int32_t axes,
              bool negate, Engine engine) {
             b.get().tensorReduce(dst.tile, src.tile, op, axes, negate, engine);
           })
      .def("tensor_copy", [](PyBuilder& b, const PyTile& dst, const PyTile& src,
                             Engine engine) { b.get().tensorCopy(dst.tile, src.tile, engine); })
      .def(
          "copy_predicated",
          [](PyBuilder& b, const PyTile& dst, const PyTile& predicate, const PyTile& src,
             Engine engine) { b.get().copyPredicated(dst.tile, predicate.tile, src.tile, engine); })
      .def("memset", [](PyBuilder& b, const PyTile& dst, float value,
                        Engine engine) { b.get().memset(dst.tile, value, engine); })
      .def("iota",
           [](PyBuilder& b, const PyTile& dst, const std::vector<int64_t>& steps, int64_t offset,
              int64_t channelMultiplier, Engine engine) {
             b.get().iota(dst.tile, affineOver(dst.tile, steps, offset, channelMultiplier), engine);
           })
      .def("affine_select",
           [](PyBuilder& b, const PyTile& dst, const PyTile& src, const std::vector<int64_t>& steps,
              int64_t offset, int64_t channelMultiplier, AluOp cmp, float fill, Engine engine) {
             b.get().affineSelect(dst.tile, src.tile,
                                  affineOver(dst.tile, steps, offset, channelMultiplier), cmp, fill,
                                  engine);
           });
}

}  // namespace neuronsim::python
