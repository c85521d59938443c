// GpSimdE semantics: iota and affine_select over affine(p, i) = offset + cm*p + sum(step_j*i_j).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/footprint.h"
#include "isa/semantics_ops.h"

namespace neuronsim::isa::detail {

namespace {

/// affine(p, i) for every dst element in visiting order (exact, int64).
std::vector<int64_t> affineValues(const Instruction& inst, const OperandRef& dst) {
  const Affine& a = inst.affine;
  int64_t patternSize = 1;
  for (const Dim& d : a.pattern) patternSize *= d.num;
  requireCount("affine pattern size (dst free size)", patternSize, dst.freeSize());
  // Free-axis part, row-major over the pattern.
  const std::vector<int64_t> freePart = visitOffsets(a.pattern);
  requireCount("affine pattern size (dst free size)", static_cast<int64_t>(freePart.size()),
               dst.freeSize());
  std::vector<int64_t> out(static_cast<size_t>(dst.size()));
  for (int64_t p = 0; p < dst.partitions(); ++p)
    for (int64_t i = 0; i < patternSize; ++i)
      out[p * patternSize + i] = a.offset + a.channelMultiplier * p + freePart[i];
  return out;
}

bool compareWithZero(const Instruction& inst, int64_t v) {
  switch (inst.cmp) {
    case AluOp::IsEqual:
      return v == 0;
    case AluOp::NotEqual:
      return v != 0;
    case AluOp::IsLt:
      return v < 0;
    case AluOp::IsLe:
      return v <= 0;
    case AluOp::IsGt:
      return v > 0;
    case AluOp::IsGe:
      return v >= 0;
    default:
      throw Error(fmt::format("cmp {} is not a comparison", aluOpName(inst.cmp)));
  }
}

}  // namespace

void execIota(const Instruction& inst, int64_t, MemoryState& memory) {
  OperandRef dst(memory, inst.dst);
  const std::vector<int64_t> v = affineValues(inst, dst);
  if (dst.dtype() == Dtype::Int32) {
    // Exact integers (saturated), not through fp32.
    const int64_t free = dst.freeSize();
    for (int64_t p = 0; p < dst.partitions(); ++p)
      for (int64_t i = 0; i < free; ++i) {
        const auto x = static_cast<int32_t>(
            std::clamp<int64_t>(v[p * free + i], std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max()));
        std::memcpy(dst.element(p, i), &x, 4);
      }
    dst.markAllWritten();
    return;
  }
  std::vector<float> f(v.size());
  for (size_t k = 0; k < v.size(); ++k) f[k] = static_cast<float>(v[k]);
  dst.storeFloats(f.data());
}

void execAffineSelect(const Instruction& inst, int64_t index, MemoryState& memory) {
  std::vector<float> data = readFloats(memory, source(inst, 0), index, "srcs[0]");
  OperandRef dst(memory, inst.dst);
  requireCount("srcs[0] element count", static_cast<int64_t>(data.size()), dst.size());
  const std::vector<int64_t> v = affineValues(inst, dst);
  for (size_t k = 0; k < v.size(); ++k)
    if (!compareWithZero(inst, v[k])) data[k] = inst.value;
  dst.storeFloats(data.data());
}

}  // namespace neuronsim::isa::detail
