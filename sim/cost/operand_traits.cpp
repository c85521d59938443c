// Operand facts used by the cost formulas.
#include "sim/cost/operand_traits.h"

#include <cstdlib>

namespace neuronsim::sim {

namespace {
const isa::Dim* innermostDim(const isa::AccessPattern& ap) {
  for (auto it = ap.dims.rbegin(); it != ap.dims.rend(); ++it)
    if (it->num > 1) return &*it;
  return nullptr;
}
}  // namespace

int64_t innermostStrideBytes(const isa::AccessPattern& ap) {
  const isa::Dim* d = innermostDim(ap);
  return d ? std::llabs(d->step) * isa::dtypeBytes(ap.dtype) : 0;
}

bool innermostContiguous(const isa::AccessPattern& ap) {
  const isa::Dim* d = innermostDim(ap);
  return !d || d->step == 1;
}

bool isSixteenBitFloat(isa::Dtype dtype) {
  return dtype == isa::Dtype::Bf16 || dtype == isa::Dtype::Fp16;
}

int64_t elementsPerPartition(const isa::Instruction& inst) {
  return inst.srcs.empty() ? inst.dst.freeSize() : inst.srcs.front().freeSize();
}

}  // namespace neuronsim::sim
