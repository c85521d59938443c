#pragma once
// Where an operand lives and how it is walked: memory space, partitions and free-axis dims.

#include <cstdint>
#include <string_view>
#include <vector>

#include "isa/dtype.h"
#include "isa/pooled_allocator.h"

namespace neuronsim::isa {

enum class Space : uint8_t { Hbm, Sbuf, Psum };
std::string_view spaceName(Space space);  // hbm, sbuf, psum

/// One free-axis dimension: `num` elements, `step` elements apart (nki's [step, num]).
struct Dim {
  int64_t step = 1;
  int64_t num = 1;
  bool operator==(const Dim&) const = default;
};

}  // namespace neuronsim::isa

NEURONSIM_POOLED_STD_ALLOCATOR(neuronsim::isa::Dim);

namespace neuronsim::isa {

/// An operand. Elements are visited partition-major, then dims outermost first
/// (row-major), which is the order that pairs elements of two operands.
///
/// SBUF/PSUM: partitions [partitionStart, partitionStart+partitionCount); `offset` is the
/// byte address inside each partition; element (p, i0..ik) lives at byte
/// offset + sum(i_j * dims[j].step) * dtypeBytes(dtype) of partition p.
///
/// HBM: `tensor` indexes Program::tensors, whose dtype must equal `dtype`; the "partition"
/// axis is an ordinary outer dim of partitionCount rows, partitionStep elements apart;
/// element (p, i0..ik) is at element index offset + p*partitionStep + sum(i_j*dims[j].step).
struct AccessPattern {
  Space space = Space::Sbuf;
  Dtype dtype = Dtype::Fp32;
  int32_t tensor = -1;
  int32_t partitionStart = 0;
  int32_t partitionCount = 1;
  int64_t partitionStep = 0;
  int64_t offset = 0;
  std::vector<Dim> dims;

  /// Elements per partition (product of dims' nums; 1 when dims is empty).
  int64_t freeSize() const {
    int64_t n = 1;
    for (const Dim& d : dims) n *= d.num;
    return n;
  }
  /// partitionCount * freeSize().
  int64_t numElements() const { return static_cast<int64_t>(partitionCount) * freeSize(); }
  bool operator==(const AccessPattern&) const = default;
};

}  // namespace neuronsim::isa

NEURONSIM_POOLED_STD_ALLOCATOR(neuronsim::isa::AccessPattern);
