#pragma once
// One convolution problem in the form the conv core computes, from conv3d or conv3d_transpose.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

using Int3 = std::array<int64_t, 3>;

/// out[b, co, o] = act(bias[co] + sum over ci, taps t of V[b, ci, o*stride + t*dilation] *
/// filters[stored tap of t, ci, co]), where V is x_in with zeros inserted between elements
/// (inputDilation) and x_in[i] placed at virtual coordinate padLo + i*inputDilation; every other
/// virtual coordinate holds zero. All triples are (D, H, W).
struct ConvCore {
  std::string kernel;  ///< kernel name for errors
  int64_t batch = 1;
  int64_t cin = 1;
  int64_t cout = 1;
  Int3 in{1, 1, 1};             ///< x_in spatial extent
  Int3 out{1, 1, 1};            ///< output spatial extent
  Int3 taps{1, 1, 1};           ///< filter extent
  Int3 stride{1, 1, 1};         ///< virtual-input step between neighbouring outputs
  Int3 dilation{1, 1, 1};       ///< virtual-input step between neighbouring taps
  Int3 inputDilation{1, 1, 1};  ///< virtual-input step between neighbouring x_in elements
  Int3 padLo{0, 0, 0};          ///< virtual coordinate of x_in[0] (negative: cropped)
  bool flipTaps = false;        ///< tap t reads stored tap taps-1-t
  bool filtersCoCi = false;  ///< filters stored [Kd, Kh, Kw, C_out, C_in] (else [.., C_in, C_out])
  bool hasBias = false;
  isa::ActFn act = isa::ActFn::Copy;

  int64_t tapCount() const { return taps[0] * taps[1] * taps[2]; }
  Shape outputShape() const { return {batch, cout, out[0], out[1], out[2]}; }
};

/// The conv3d problem of these input shapes and parameters; throws neuronsim::Error
/// "conv3d: <culprit> <rule>".
ConvCore conv3dCore(const ShapeMap& inputs, const ParamValues& params);
/// The conv3d_transpose problem mapped onto the conv core (input dilation = stride,
/// padLo = dilation*(K-1) - pad_lo, stride 1, flipped taps).
ConvCore conv3dTransposeCore(const ShapeMap& inputs, const ParamValues& params);
/// The forward conv3d of conv3d_bwd's x_in and filters; when `checkDy`, checks dy
/// [B, C_out, Do, Ho, Wo] against it.
ConvCore conv3dBwdCore(const ShapeMap& inputs, const ParamValues& params, bool checkDy = true);
/// The conv core computing dx from dy for `forward`: a transposed conv of dy (input dilation =
/// stride, padLo = dilation*(K-1) - pad_lo) whose filters are the forward filters read as
/// [K, out, in] with flipped taps.
ConvCore dxCore(const ConvCore& forward);

/// The multiply-accumulates a kernel must execute for `core`: batch * C_in * C_out times, per
/// axis, the (output, tap) pairs whose virtual input coordinate holds an x element (taps over
/// padding, cropped outputs and inserted zeros excluded). The conv kernels' roofline flops are
/// twice this (conv3d_bwd: per gradient of dx and dw).
double usefulMacs(const ConvCore& core);
/// x_in elements some tap of some output reads (the rest, e.g. rows a wide dilation or a stride
/// skips, need never be loaded).
int64_t mustReadInputElements(const ConvCore& core);

/// The ActFn of an activation_fn parameter value (none -> Copy).
isa::ActFn convActivation(const std::string& kernel, const std::string& name);
/// The activation_fn parameter choices.
const std::vector<std::string>& convActivationNames();

}  // namespace neuronsim::kernels
