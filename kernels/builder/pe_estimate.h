#pragma once
// TensorE cycle estimates for kernels' scheduling choices, from the machine's Geometry rates
// (P1, I2): what the planners weigh, not the cost model (sim/cost times the real run).

#include <algorithm>
#include <cstdint>

#include "isa/geometry.h"

namespace neuronsim::kernels {

/// PE cycles of a LoadStationary of `columns` stationary columns (fp32 at its own rate); it
/// runs in the background of the TensorE instruction before it.
inline double stationaryLoadCycles(const isa::Geometry& geometry, int64_t columns, bool fp32) {
  return static_cast<double>(columns) *
         (fp32 ? geometry.fp32MatmulFactor / geometry.lsSpeedupFp32 : 1 / geometry.lsSpeedup);
}

/// PE cycles of a matmul of `stationary` and `moving` columns: max(min(floor, stationary),
/// moving), fp32 times its factor.
inline double matmulCycles(const isa::Geometry& geometry, int64_t stationary, int64_t moving,
                           bool fp32) {
  return static_cast<double>(std::max(std::min(geometry.matmulMinCycles, stationary), moving)) *
         (fp32 ? geometry.fp32MatmulFactor : 1.0);
}

}  // namespace neuronsim::kernels
