#pragma once
// matmul_tutorial: the NKI matmul tutorials' kernels, one `variant` per stage, and their
// published measurements (the calibration check set of issue 8).

#include <string>
#include <vector>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// The registry entry of `matmul_tutorial`.
KernelSpec matmulTutorialSpec();

/// One published measurement of a tutorial kernel: run `variant` on `machine` at `dtype` with
/// lhsT [K, M] and rhs [K, N] and compare the simulated time with `publishedMs`.
struct TutorialMeasurement {
  std::string variant;
  std::string machine;  ///< preset name
  isa::Dtype dtype;
  Shape lhsT;
  Shape rhs;
  double publishedMs;
  std::string source;  ///< where the number comes from
  /// A fit case: a machine constant was chosen from this time (named in the preset's source).
  bool fit = false;
};

/// The six published cases (T1 on trn1 bf16, T2 on trn2 fp32), in variant order; T1 hoisted is
/// the fit case of trn1's dma_strided_hbm_efficiency.
const std::vector<TutorialMeasurement>& tutorialMeasurements();

}  // namespace neuronsim::kernels
