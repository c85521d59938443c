// Strided view transforms and their access patterns.
#include "kernels/builder/views.h"

#include <fmt/format.h>

#include <numeric>

#include "isa/dtype.h"
#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

namespace {

void checkAxis(const StridedLayout& layout, int axis, const char* what) {
  if (axis < 0 || axis >= layout.rank())
    throw Error(
        fmt::format("view {}: axis {} out of range for rank {}", what, axis, layout.rank()));
}

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

StridedLayout StridedLayout::contiguous(const std::vector<int64_t>& shape) {
  StridedLayout layout;
  layout.shape = shape;
  layout.strides.assign(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    layout.strides[i] = layout.strides[i + 1] * shape[i + 1];
  return layout;
}

int64_t StridedLayout::numElements() const {
  return product(shape);
}

StridedLayout StridedLayout::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
  checkAxis(*this, axis, "slice");
  if (step <= 0 || start < 0 || stop > shape[axis] || start >= stop)
    throw Error(fmt::format("view slice: [{}:{}:{}] is not a non-empty range of an axis of size {}",
                            start, stop, step, shape[axis]));
  StridedLayout out = *this;
  out.offset += start * strides[axis];
  out.shape[axis] = isa::ceilDiv(stop - start, step);
  out.strides[axis] *= step;
  return out;
}

StridedLayout StridedLayout::select(int axis, int64_t index) const {
  checkAxis(*this, axis, "select");
  if (index < 0 || index >= shape[axis])
    throw Error(
        fmt::format("view select: index {} outside an axis of size {}", index, shape[axis]));
  StridedLayout out = *this;
  out.offset += index * strides[axis];
  out.shape.erase(out.shape.begin() + axis);
  out.strides.erase(out.strides.begin() + axis);
  return out;
}

StridedLayout StridedLayout::split(int axis, const std::vector<int64_t>& sizes) const {
  checkAxis(*this, axis, "split");
  if (sizes.empty() || product(sizes) != shape[axis])
    throw Error(fmt::format("view split: sizes do not multiply to the axis size {}", shape[axis]));
  StridedLayout out = *this;
  std::vector<int64_t> newStrides(sizes.size());
  int64_t inner = strides[axis];
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    newStrides[i] = inner;
    inner *= sizes[i];
  }
  out.shape.erase(out.shape.begin() + axis);
  out.strides.erase(out.strides.begin() + axis);
  out.shape.insert(out.shape.begin() + axis, sizes.begin(), sizes.end());
  out.strides.insert(out.strides.begin() + axis, newStrides.begin(), newStrides.end());
  return out;
}

StridedLayout StridedLayout::merge(int first, int last) const {
  checkAxis(*this, first, "merge");
  checkAxis(*this, last, "merge");
  if (first > last) throw Error("view merge: first axis after last");
  for (int i = first; i < last; ++i)
    if (shape[i] > 1 && shape[i + 1] > 1 && strides[i] != strides[i + 1] * shape[i + 1])
      throw Error(fmt::format("view merge: axes {} and {} are not contiguous", i, i + 1));
  StridedLayout out = *this;
  int64_t size = 1;
  for (int i = first; i <= last; ++i) size *= shape[i];
  int64_t stride = strides[last];
  for (int i = last; i >= first; --i)
    if (shape[i] > 1) {
      stride = strides[i];
      break;
    }
  out.shape.erase(out.shape.begin() + first, out.shape.begin() + last + 1);
  out.strides.erase(out.strides.begin() + first, out.strides.begin() + last + 1);
  out.shape.insert(out.shape.begin() + first, size);
  out.strides.insert(out.strides.begin() + first, stride);
  return out;
}

StridedLayout StridedLayout::permute(const std::vector<int>& order) const {
  if (static_cast<int>(order.size()) != rank())
    throw Error("view permute: order has the wrong length");
  std::vector<bool> seen(order.size(), false);
  StridedLayout out = *this;
  for (size_t i = 0; i < order.size(); ++i) {
    int a = order[i];
    if (a < 0 || a >= rank() || seen[a]) throw Error("view permute: order is not a permutation");
    seen[a] = true;
    out.shape[i] = shape[a];
    out.strides[i] = strides[a];
  }
  return out;
}

StridedLayout StridedLayout::reshape(const std::vector<int64_t>& newShape) const {
  if (product(newShape) != numElements()) throw Error("view reshape: element count changes");
  if (rank() == 0) {
    StridedLayout out = contiguous(newShape);
    out.offset = offset;
    return out;
  }
  StridedLayout flat = merge(0, rank() - 1);
  StridedLayout out = flat.split(0, newShape.empty() ? std::vector<int64_t>{1} : newShape);
  if (newShape.empty()) return out.select(0, 0);
  return out;
}

StridedLayout StridedLayout::broadcast(int axis, int64_t count) const {
  if (axis < 0 || axis > rank() || count < 1) throw Error("view broadcast: bad axis or count");
  StridedLayout out = *this;
  out.shape.insert(out.shape.begin() + axis, count);
  out.strides.insert(out.strides.begin() + axis, 0);
  return out;
}

std::vector<isa::Dim> StridedLayout::dims(int first) const {
  std::vector<isa::Dim> out;
  for (int i = first; i < rank(); ++i) out.push_back(isa::Dim{strides[i], shape[i]});
  return out;
}

std::vector<isa::Dim> compactDims(const std::vector<isa::Dim>& dims) {
  std::vector<isa::Dim> out;
  for (const isa::Dim& d : dims) {
    if (d.num == 1) continue;
    if (!out.empty() && out.back().step == d.step * d.num) {
      out.back().num *= d.num;
      out.back().step = d.step;
      continue;
    }
    out.push_back(d);
  }
  return out;
}

isa::AccessPattern HbmView::ap() const {
  isa::AccessPattern ap;
  ap.space = isa::Space::Hbm;
  ap.dtype = dtype_;
  ap.tensor = tensor_;
  ap.offset = layout_.offset;
  if (layout_.rank() == 0) return ap;
  ap.partitionCount = static_cast<int32_t>(layout_.shape[0]);
  ap.partitionStep = layout_.strides[0];
  ap.dims = compactDims(layout_.dims(1));
  return ap;
}

Tile Tile::partitionSlice(int32_t start, int32_t count) const {
  if (start < 0 || count < 1 || start + count > partitionCount_)
    throw Error(fmt::format("tile {}: partitions [{}, {}) outside its {}", name_, start,
                            start + count, partitionCount_));
  return Tile(space_, dtype_, partitionStart_ + start, count, baseBytes_, free_, name_);
}

isa::AccessPattern Tile::ap() const {
  isa::AccessPattern ap;
  ap.space = space_;
  ap.dtype = dtype_;
  ap.partitionStart = partitionStart_;
  ap.partitionCount = partitionCount_;
  ap.offset = baseBytes_ + free_.offset * isa::dtypeBytes(dtype_);
  ap.dims = free_.dims(0);
  return ap;
}

}  // namespace neuronsim::kernels
