#pragma once
// Plain C++ reference implementations of conv3d and conv3d_transpose (PyTorch semantics).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// Geometry and options of a reference convolution. Triples are (D, H, W); padding is
/// (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi).
struct ConvRefParams {
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 6> padding{};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> outputPadding{};  ///< transpose only
  std::string activation = "none";         ///< none, relu, sigmoid, tanh, silu, gelu, gelu_tanh
};

/// torch.nn.functional.conv3d(x, w, bias) then the activation; x [B, Ci, D, H, W],
/// w [Kd, Kh, Kw, Ci, Co], bias [Co] or empty. Accumulates in double.
HostTensor conv3dRef(const HostTensor& x, const HostTensor& w, const std::vector<float>& bias,
                     const ConvRefParams& p);

/// torch.nn.functional.conv_transpose3d(x, W, bias) with asymmetric padding then the activation:
/// out[o] += x[i] * W[k] for o = i*stride - pad_lo + k*dilation; x [B, Ci, D, H, W],
/// W [Kd, Kh, Kw, Ci, Co] (already in the orientation the formula uses), bias [Co] or empty.
HostTensor conv3dTransposeRef(const HostTensor& x, const HostTensor& w,
                              const std::vector<float>& bias, const ConvRefParams& p);

/// Gradients of conv3dRef (no bias, no activation) for `dy` [B, Co, Do, Ho, Wo], by one loop over
/// every (batch, co, output position, tap, ci) term of the forward sum: "dx" [B, Ci, D, H, W],
/// "dw" [Kd, Kh, Kw, Ci, Co] and "db" [Co].
HostTensors conv3dBwdRef(const HostTensor& dy, const HostTensor& x, const HostTensor& w,
                         const ConvRefParams& p);

/// The transpose weight W [Kd, Kh, Kw, Ci, Co] from stored `filters`: [.., Ci, Co] or, when
/// `coCi`, [.., Co, Ci]; reversed along Kd, Kh, Kw unless `flipInKernel`.
HostTensor transposeWeightRef(const HostTensor& filters, bool coCi, bool flipInKernel);

/// The activation applied to one value (double precision).
double activationRef(const std::string& name, double v);

}  // namespace neuronsim::kernels
