#pragma once
// Facts about operands that the cost formulas branch on (placement, dtype width, strides).

#include <cstdint>

#include "isa/instruction.h"
#include "isa/operands.h"

namespace neuronsim::sim {

/// The innermost dim with more than one element (null when there is none).
inline const isa::Dim* innermostDim(const isa::AccessPattern& ap) {
  for (auto it = ap.dims.rbegin(); it != ap.dims.rend(); ++it)
    if (it->num > 1) return &*it;
  return nullptr;
}
/// Bytes between consecutive elements of the innermost dim that has more than one element
/// (0 when every dim has one element).
inline int64_t innermostStrideBytes(const isa::AccessPattern& ap) {
  const isa::Dim* d = innermostDim(ap);
  return d ? (d->step < 0 ? -d->step : d->step) * isa::dtypeBytes(ap.dtype) : 0;
}
/// True when the innermost multi-element dim has step 1 (or there is none).
inline bool innermostContiguous(const isa::AccessPattern& ap) {
  const isa::Dim* d = innermostDim(ap);
  return !d || d->step == 1;
}
/// True for bf16 and fp16.
inline bool isSixteenBitFloat(isa::Dtype dtype) {
  return dtype == isa::Dtype::Bf16 || dtype == isa::Dtype::Fp16;
}
/// Elements per partition an instruction processes: srcs[0]'s free size, else dst's.
inline int64_t elementsPerPartition(const isa::Instruction& inst) {
  return inst.srcs.empty() ? inst.dst.freeSize() : inst.srcs.front().freeSize();
}

}  // namespace neuronsim::sim
