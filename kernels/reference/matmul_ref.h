#pragma once
// Plain C++ reference of matmul: out[m][n] = sum_k lhsT[k][m] * rhs[k][n].

#include <cstdint>
#include <vector>

namespace neuronsim::kernels {

/// lhsT is [K, M], rhs is [K, N], both C order; returns out [M, N] (accumulated in double,
/// then rounded to fp32).
std::vector<float> matmulReference(const std::vector<float>& lhsT, const std::vector<float>& rhs,
                                   int64_t k, int64_t m, int64_t n);

}  // namespace neuronsim::kernels
