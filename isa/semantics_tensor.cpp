// TensorE semantics: nc_matmul (fp32 accumulation in k order) and nc_transpose.
#include <vector>

#include "isa/semantics_ops.h"

namespace neuronsim::isa::detail {

void execNcMatmul(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef stationary(memory, source(inst, 0));
  const OperandRef moving(memory, source(inst, 1));
  OperandRef dst(memory, inst.dst);
  const int64_t k = stationary.partitions();
  const int64_t m = stationary.freeSize();
  const int64_t n = moving.freeSize();
  requireCount("moving partition count (K)", moving.partitions(), k);
  requireCount("dst partition count (stationary free size M)", dst.partitions(), m);
  requireCount("dst free size (moving free size N)", dst.freeSize(), n);

  stationary.checkInitialized(index, "srcs[0]");
  moving.checkInitialized(index, "srcs[1]");
  const std::vector<float> s = stationary.loadFloats();
  const std::vector<float> v = moving.loadFloats();

  // sum[m][n] = sum over k = 0..K-1 (in that order) of s[k][m] * v[k][n], in fp32.
  std::vector<float> sum(static_cast<size_t>(m * n), 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* vrow = v.data() + kk * n;
    for (int64_t mm = 0; mm < m; ++mm) {
      const float w = s[kk * m + mm];
      float* out = sum.data() + mm * n;
      for (int64_t nn = 0; nn < n; ++nn) out[nn] += w * vrow[nn];
    }
  }
  if (inst.accumulate) {
    dst.checkInitialized(index, "dst");
    const std::vector<float> old = dst.loadFloats();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = old[i] + sum[i];
  }
  dst.storeFloats(sum.data());
}

}  // namespace neuronsim::isa::detail
