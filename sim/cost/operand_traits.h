#pragma once
// Facts about operands that the cost formulas branch on (placement, dtype width, strides).

#include <cstdint>

#include "isa/footprint.h"
#include "isa/instruction.h"

namespace neuronsim::sim {

/// What the cost formulas read of one operand's dims, from one walk of them.
struct OperandShape {
  int64_t freeSize;  ///< elements per partition (product of the dims' nums)
  /// Bytes between consecutive elements of the innermost dim with more than one element
  /// (0 when every dim has one element).
  int64_t strideBytes;
  bool contiguous;  ///< the innermost multi-element dim has step 1 (or there is none)
  bool onChip;      ///< SBUF or PSUM
};

/// One walk of `ap`'s dims: its shape, and with kReach also the element reach of its dims
/// (what its box needs) in `reach`. Inline: the decoder walks every operand it decodes.
template <bool kReach>
inline OperandShape walkDims(const isa::AccessPattern& ap, isa::Reach& reach) {
  OperandShape shape;
  int64_t n = 1;
  const isa::Dim* innermost = nullptr;
  for (const isa::Dim& d : ap.dims) {
    n *= d.num;
    if (d.num > 1) {
      innermost = &d;
      if constexpr (kReach) reach.add(d.step, d.num);
    }
  }
  shape.freeSize = n;
  const int64_t step = innermost ? innermost->step : 0;
  shape.strideBytes = (step < 0 ? -step : step) * isa::dtypeBytes(ap.dtype);
  shape.contiguous = !innermost || step == 1;
  shape.onChip = ap.space != isa::Space::Hbm;
  return shape;
}
/// The shape of `ap`.
inline OperandShape shapeOf(const isa::AccessPattern& ap) {
  isa::Reach unused;
  return walkDims<false>(ap, unused);
}

/// True for bf16 and fp16.
inline bool isSixteenBitFloat(isa::Dtype dtype) {
  return dtype == isa::Dtype::Bf16 || dtype == isa::Dtype::Fp16;
}

}  // namespace neuronsim::sim
