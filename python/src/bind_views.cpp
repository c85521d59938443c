// HBM tensor views and SBUF/PSUM tiles with numpy-style indexing and the builder's transforms.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "isa/error.h"
#include "python/src/bindings.h"
#include "python/src/py_tile.h"

namespace py = pybind11;

namespace neuronsim::python {

using kernels::HbmView;
using kernels::StridedLayout;
using kernels::Tile;

Allocation::~Allocation() {
  try {
    release();
  } catch (...) {  // a destructor must not throw; the builder reports misuse elsewhere
  }
}

void Allocation::release() {
  if (released_) return;
  released_ = true;
  if (auto session = session_.lock(); session && session->builder) session->builder->release(tile_);
}

namespace {

/// One index of a subscript, resolved against an axis of `size`: a single element (drops the
/// axis) or a range start:stop:step.
struct AxisIndex {
  bool single = false;
  int64_t start = 0, stop = 0, step = 1;
};

int64_t resolve(int64_t i, int64_t size) {
  return i < 0 ? i + size : i;
}

AxisIndex axisIndex(const py::handle& item, int64_t size, int axis) {
  AxisIndex r;
  if (py::isinstance<py::slice>(item)) {
    const auto attr = [&](const char* name, int64_t fallback) {
      py::object v = item.attr(name);
      return v.is_none() ? fallback : v.cast<int64_t>();
    };
    r.step = attr("step", 1);
    r.start = resolve(attr("start", 0), size);
    r.stop = resolve(attr("stop", size), size);
    if (r.step < 1 || r.start < 0 || r.stop > size || r.start >= r.stop)
      throw Error(fmt::format(
          "index {}:{}:{} of axis {} is not a non-empty forward range of its {} elements", r.start,
          r.stop, r.step, axis, size));
    return r;
  }
  if (!py::isinstance<py::int_>(item))
    throw Error(fmt::format("axis {} takes an int or a slice, not {}", axis,
                            std::string(py::str(py::type::of(item).attr("__name__")))));
  r.single = true;
  r.start = resolve(item.cast<int64_t>(), size);
  if (r.start < 0 || r.start >= size)
    throw Error(
        fmt::format("index {} outside axis {} of {} elements", item.cast<int64_t>(), axis, size));
  r.stop = r.start + 1;
  return r;
}

/// The subscript `key` as one AxisIndex per axis of `shape` (missing trailing axes: whole).
std::vector<AxisIndex> subscript(const py::handle& key, const std::vector<int64_t>& shape) {
  py::tuple items =
      py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  if (items.size() > shape.size())
    throw Error(fmt::format("{} indices for a view of rank {}", items.size(), shape.size()));
  std::vector<AxisIndex> out;
  for (size_t a = 0; a < shape.size(); ++a)
    out.push_back(a < items.size() ? axisIndex(items[a], shape[a], static_cast<int>(a))
                                   : AxisIndex{false, 0, shape[a], 1});
  return out;
}

/// Applies the indices to `layout`'s axes [first, ...), last axis first so selects keep the
/// numbering of the axes still to do.
StridedLayout indexLayout(StridedLayout layout, const std::vector<AxisIndex>& idx, size_t first) {
  for (size_t a = idx.size(); a-- > first;) {
    const int axis = static_cast<int>(a - first);
    layout = idx[a].single ? layout.select(axis, idx[a].start)
                           : layout.slice(axis, idx[a].start, idx[a].stop, idx[a].step);
  }
  return layout;
}

py::tuple tupleOf(const std::vector<int64_t>& v) {
  return py::cast(v);
}

std::vector<int64_t> tileShape(const Tile& t) {
  std::vector<int64_t> shape{t.partitions()};
  shape.insert(shape.end(), t.shape().begin(), t.shape().end());
  return shape;
}

/// A tile axis (0 = partition) as a free-axis index; the partition axis is not one.
int freeAxis(int axis, const char* what) {
  if (axis < 1) throw Error(fmt::format("tile {}: axis {} is not a free axis (1..)", what, axis));
  return axis - 1;
}

Tile withLayout(const Tile& t, StridedLayout layout) {
  return Tile(t.space(), t.dtype(), t.partitionStart(), t.partitions(), t.baseBytes(),
              std::move(layout), t.name());
}

std::string viewText(const std::string& kind, const std::string& name,
                     const std::vector<int64_t>& shape, isa::Dtype dtype) {
  return fmt::format("{} '{}' [{}] {}", kind, name, fmt::join(shape, ", "), isa::dtypeName(dtype));
}

}  // namespace

void bindViews(py::module_& m) {
  py::class_<HbmView>(m, "HbmTensor",
                      "A view of an HBM tensor: any strides; axis 0 maps to partitions in a DMA")
      .def_property_readonly("name", &HbmView::name)
      .def_property_readonly("shape", [](const HbmView& v) { return tupleOf(v.shape()); })
      .def_property_readonly("dtype", &HbmView::dtype)
      .def_property_readonly("ndim", &HbmView::rank)
      .def_property_readonly("size", &HbmView::numElements)
      .def("__getitem__",
           [](const HbmView& v, const py::object& key) {
             const auto idx = subscript(key, v.shape());
             bool allSingle = true;
             for (const AxisIndex& i : idx) allSingle = allSingle && i.single;
             if (allSingle)
               throw Error(
                   fmt::format("indexing every axis of '{}' leaves no axis to move", v.name()));
             return HbmView(v.tensor(), v.dtype(), indexLayout(v.layout(), idx, 0), v.name());
           })
      .def("reshape",
           [](const HbmView& v, const std::vector<int64_t>& shape) { return v.reshape(shape); })
      .def("permute",
           [](const HbmView& v, const std::vector<int>& order) { return v.permute(order); })
      .def("split", [](const HbmView& v, int axis,
                       const std::vector<int64_t>& sizes) { return v.split(axis, sizes); })
      .def("merge", [](const HbmView& v, int first, int last) { return v.merge(first, last); })
      .def("__repr__",
           [](const HbmView& v) { return viewText("HbmTensor", v.name(), v.shape(), v.dtype()); });

  py::class_<PyTile>(m, "Tile", "A view of an SBUF or PSUM allocation: [partitions, free...]")
      .def_property_readonly("name", [](const PyTile& t) { return t.tile.name(); })
      .def_property_readonly("shape", [](const PyTile& t) { return tupleOf(tileShape(t.tile)); })
      .def_property_readonly("dtype", [](const PyTile& t) { return t.tile.dtype(); })
      .def_property_readonly("ndim", [](const PyTile& t) { return t.tile.rank() + 1; })
      .def_property_readonly(
          "buffer",
          [](const PyTile& t) { return t.tile.space() == isa::Space::Psum ? "psum" : "sbuf"; })
      .def_property_readonly("partition_start",
                             [](const PyTile& t) { return t.tile.partitionStart(); })
      .def_property_readonly("byte_offset", [](const PyTile& t) { return t.tile.baseBytes(); })
      .def("__getitem__",
           [](const PyTile& t, const py::object& key) {
             const auto idx = subscript(key, tileShape(t.tile));
             if (idx[0].step != 1)
               throw Error(fmt::format("tile '{}': partitions take a step of 1", t.tile.name()));
             const Tile rows =
                 t.tile.partitionSlice(static_cast<int32_t>(idx[0].start),
                                       static_cast<int32_t>(idx[0].stop - idx[0].start));
             return t.with(withLayout(rows, indexLayout(rows.layout(), idx, 1)));
           })
      .def("reshape",
           [](const PyTile& t, const std::vector<int64_t>& shape) {
             if (shape.empty() || shape[0] != t.tile.partitions())
               throw Error(fmt::format("tile '{}': reshape keeps the partition axis first ({})",
                                       t.tile.name(), t.tile.partitions()));
             return t.with(t.tile.reshape(std::vector<int64_t>(shape.begin() + 1, shape.end())));
           })
      .def("permute",
           [](const PyTile& t, const std::vector<int>& order) {
             if (order.empty() || order[0] != 0)
               throw Error(fmt::format("tile '{}': permute keeps axis 0 first", t.tile.name()));
             std::vector<int> freeOrder;
             for (size_t i = 1; i < order.size(); ++i)
               freeOrder.push_back(freeAxis(order[i], "permute"));
             return t.with(t.tile.permute(freeOrder));
           })
      .def("split",
           [](const PyTile& t, int axis, const std::vector<int64_t>& sizes) {
             return t.with(t.tile.split(freeAxis(axis, "split"), sizes));
           })
      .def("merge",
           [](const PyTile& t, int first, int last) {
             return t.with(t.tile.merge(freeAxis(first, "merge"), freeAxis(last, "merge")));
           })
      .def(
          "broadcast",
          [](const PyTile& t, int axis, int64_t count) {
            return t.with(t.tile.broadcast(freeAxis(axis, "broadcast"), count));
          },
          "inserts axis `axis` (1..) of `count` elements with step 0 (reads repeat)")
      .def(
          "release", [](const PyTile& t) { t.allocation->release(); },
          "frees the allocation now (otherwise it is freed when its last view is gone)")
      .def("__repr__", [](const PyTile& t) {
        return viewText(t.tile.space() == isa::Space::Psum ? "psum Tile" : "sbuf Tile",
                        t.tile.name(), tileShape(t.tile), t.tile.dtype());
      });
}

}  // namespace neuronsim::python
