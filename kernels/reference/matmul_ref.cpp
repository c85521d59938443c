// Triple-loop matmul reference.
#include "kernels/reference/matmul_ref.h"

#include <cstddef>

namespace neuronsim::kernels {

std::vector<float> matmulReference(const std::vector<float>& lhsT, const std::vector<float>& rhs,
                                   int64_t k, int64_t m, int64_t n) {
  std::vector<double> acc(static_cast<size_t>(m * n), 0.0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t mm = 0; mm < m; ++mm) {
      const double a = lhsT[kk * m + mm];
      double* row = &acc[mm * n];
      const float* b = &rhs[kk * n];
      for (int64_t nn = 0; nn < n; ++nn) row[nn] += a * b[nn];
    }
  return std::vector<float>(acc.begin(), acc.end());
}

}  // namespace neuronsim::kernels
