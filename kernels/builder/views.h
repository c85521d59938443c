#pragma once
// Strided views of HBM tensors and on-chip tiles that turn into isa::AccessPatterns.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/access_pattern.h"

namespace neuronsim::kernels {

/// Shape, strides (elements) and offset (elements) of an N-d strided view. Shared by
/// HbmView and Tile; every transform checks its arguments and throws neuronsim::Error.
struct StridedLayout {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;

  static StridedLayout contiguous(const std::vector<int64_t>& shape);
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numElements() const;
  StridedLayout slice(int axis, int64_t start, int64_t stop, int64_t step) const;
  StridedLayout select(int axis, int64_t index) const;
  StridedLayout split(int axis, const std::vector<int64_t>& sizes) const;
  StridedLayout merge(int first, int last) const;
  StridedLayout permute(const std::vector<int>& order) const;
  StridedLayout reshape(const std::vector<int64_t>& newShape) const;
  StridedLayout broadcast(int axis, int64_t count) const;
  /// Dims of axes [first, rank) as isa dims, unchanged (no merging).
  std::vector<isa::Dim> dims(int first) const;
};

/// Dims with size-1 entries dropped and contiguous neighbours merged (same walk order).
std::vector<isa::Dim> compactDims(const std::vector<isa::Dim>& dims);

/// A view of an HBM tensor: N-d, elements, any strides. Axis 0 becomes the access
/// pattern's partition (row) axis, the other axes its free dims.
class HbmView {
 public:
  HbmView() = default;
  HbmView(int32_t tensor, isa::Dtype dtype, StridedLayout layout, std::string name)
      : tensor_(tensor), dtype_(dtype), layout_(std::move(layout)), name_(std::move(name)) {}

  int32_t tensor() const { return tensor_; }
  isa::Dtype dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  const std::vector<int64_t>& shape() const { return layout_.shape; }
  int rank() const { return layout_.rank(); }
  int64_t size(int axis) const { return layout_.shape.at(axis); }
  int64_t numElements() const { return layout_.numElements(); }
  const StridedLayout& layout() const { return layout_; }

  /// Elements start, start+step, ... below stop along `axis`.
  HbmView slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const {
    return with(layout_.slice(axis, start, stop, step));
  }
  /// Fixes `axis` at `index` and drops it.
  HbmView select(int axis, int64_t index) const { return with(layout_.select(axis, index)); }
  /// Splits `axis` into `sizes` (row-major; product must equal the axis size).
  HbmView split(int axis, const std::vector<int64_t>& sizes) const {
    return with(layout_.split(axis, sizes));
  }
  /// Merges axes first..last (inclusive); they must be contiguous with each other.
  HbmView merge(int first, int last) const { return with(layout_.merge(first, last)); }
  /// Reorders axes: new axis i is old axis order[i].
  HbmView permute(const std::vector<int>& order) const { return with(layout_.permute(order)); }
  /// Row-major reshape; the view must be contiguous.
  HbmView reshape(const std::vector<int64_t>& shape) const { return with(layout_.reshape(shape)); }

  /// Axis 0 -> partition axis (partitionCount, partitionStep); axes 1.. -> dims, with size-1
  /// and contiguous dims compacted (the element walk order is unchanged).
  isa::AccessPattern ap() const;

 private:
  HbmView with(StridedLayout layout) const {
    return HbmView(tensor_, dtype_, std::move(layout), name_);
  }
  int32_t tensor_ = -1;
  isa::Dtype dtype_ = isa::Dtype::Fp32;
  StridedLayout layout_;
  std::string name_;
};

/// A view of an SBUF or PSUM allocation: a partition range and an N-d free-axis layout.
class Tile {
 public:
  Tile() = default;
  Tile(isa::Space space, isa::Dtype dtype, int32_t partitionStart, int32_t partitionCount,
       int64_t baseBytes, StridedLayout free, std::string name)
      : space_(space),
        dtype_(dtype),
        partitionStart_(partitionStart),
        partitionCount_(partitionCount),
        baseBytes_(baseBytes),
        free_(std::move(free)),
        name_(std::move(name)) {}

  isa::Space space() const { return space_; }
  isa::Dtype dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  int32_t partitionStart() const { return partitionStart_; }
  int32_t partitions() const { return partitionCount_; }
  /// Free-axis shape (elements).
  const std::vector<int64_t>& shape() const { return free_.shape; }
  int rank() const { return free_.rank(); }
  int64_t size(int axis) const { return free_.shape.at(axis); }
  int64_t freeSize() const { return free_.numElements(); }
  /// Byte address of the allocation inside each partition.
  int64_t baseBytes() const { return baseBytes_; }
  const StridedLayout& layout() const { return free_; }

  /// Partitions [start, start+count) relative to this view's first partition.
  Tile partitionSlice(int32_t start, int32_t count) const;
  /// Free-axis transforms, as on HbmView (axes count free axes only).
  Tile slice(int axis, int64_t start, int64_t stop, int64_t step = 1) const {
    return with(free_.slice(axis, start, stop, step));
  }
  Tile select(int axis, int64_t index) const { return with(free_.select(axis, index)); }
  Tile split(int axis, const std::vector<int64_t>& sizes) const {
    return with(free_.split(axis, sizes));
  }
  Tile merge(int first, int last) const { return with(free_.merge(first, last)); }
  Tile permute(const std::vector<int>& order) const { return with(free_.permute(order)); }
  Tile reshape(const std::vector<int64_t>& shape) const { return with(free_.reshape(shape)); }
  /// Inserts a new axis at `axis` of `count` elements with step 0 (reads repeat).
  Tile broadcast(int axis, int64_t count) const { return with(free_.broadcast(axis, count)); }

  /// The access pattern with one dim per free axis, as written (no compaction).
  isa::AccessPattern ap() const;

 private:
  Tile with(StridedLayout free) const {
    return Tile(space_, dtype_, partitionStart_, partitionCount_, baseBytes_, std::move(free),
                name_);
  }
  isa::Space space_ = isa::Space::Sbuf;
  isa::Dtype dtype_ = isa::Dtype::Fp32;
  int32_t partitionStart_ = 0;
  int32_t partitionCount_ = 0;
  int64_t baseBytes_ = 0;
  StridedLayout free_;
  std::string name_;
};

/// Either side of a DMA: an HBM view or a tile.
struct DmaOperand {
  DmaOperand(const HbmView& view) : ap(view.ap()) {}  // NOLINT(google-explicit-constructor)
  DmaOperand(const Tile& tile) : ap(tile.ap()) {}     // NOLINT(google-explicit-constructor)
  isa::AccessPattern ap;
};

/// An immediate or a per-partition [P,1] tile.
struct ScalarArg {
  ScalarArg(float value = 0.0f) : imm(value) {}  // NOLINT(google-explicit-constructor)
  ScalarArg(double value)
      : imm(static_cast<float>(value)) {}                   // NOLINT(google-explicit-constructor)
  ScalarArg(int value) : imm(static_cast<float>(value)) {}  // NOLINT(google-explicit-constructor)
  ScalarArg(const Tile& vector) : vec(vector) {}            // NOLINT(google-explicit-constructor)
  float imm = 0.0f;
  std::optional<Tile> vec;
};

}  // namespace neuronsim::kernels
