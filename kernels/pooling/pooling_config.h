#pragma once
// Shapes and window parameters of a 3D pooling call, validated, with index helpers.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::kernels {

/// HBM layout of a 5-D pooling tensor.
enum class PoolLayout : uint8_t { Ncdhw, Ndhwc };
/// "NCDHW" or "NDHWC".
std::string_view poolLayoutName(PoolLayout layout);

/// Spatial axes in the order D, H, W.
using Spatial = std::array<int64_t, 3>;

/// One axis (D or H) of halo slabs: every slab runs the same virtual problem whose box
/// [ownedFirst, ownedFirst + ownedCount) along the axis it owns (input indices for backward
/// kernels, output indices for forward). Virtual index v of slab j is index
/// v - origin + j * step of that tensor; indices outside [0, extent) are loaded as a fill value.
struct HaloAxis {
  int64_t slabs = 1;
  int64_t ownedFirst = 0;
  int64_t ownedCount = 0;
  int64_t inputOrigin = 0, inputStep = 1, inputExtent = 0;     ///< forward input / grad_input
  int64_t outputOrigin = 0, outputStep = 1, outputExtent = 0;  ///< forward output / grad_output
};

/// D and H cut into slabs with a halo (the spatial layout for overlapping windows); a plane's
/// slab (jd, jh) is its row jh * slabsD + jd.
struct HaloSlabs {
  bool active = false;
  std::array<HaloAxis, 2> axes;  ///< D, H
  /// Slabs per (batch, channel) plane.
  int64_t slabs() const { return axes[0].slabs * axes[1].slabs; }
};

/// A validated pooling problem: batch, channels, input extents, window and layouts.
struct PoolingConfig {
  int64_t batch = 1;
  int64_t channels = 1;
  Spatial input{1, 1, 1};                       ///< D, H, W of the forward input
  Spatial kernel{1, 1, 1};                      ///< kD, kH, kW
  Spatial stride{1, 1, 1};                      ///< sD, sH, sW
  Spatial padding{0, 0, 0};                     ///< pD, pH, pW (both sides)
  PoolLayout dataFormat = PoolLayout::Ncdhw;    ///< layout of the forward input and grad_input
  PoolLayout outputFormat = PoolLayout::Ncdhw;  ///< layout of the forward output and grad_output
  HaloSlabs halo;                               ///< set when the problem is a halo slab's

  /// Do, Ho, Wo: floor((N + 2p - k) / s) + 1 per axis.
  Spatial output() const;
  /// The forward input's shape in dataFormat.
  std::vector<int64_t> inputShape() const;
  /// The forward output's shape in outputFormat.
  std::vector<int64_t> outputShape() const;
  /// Element index of (b, c, d, h, w) in a tensor of extents `extents` laid out as `layout`.
  int64_t index(PoolLayout layout, const Spatial& extents, int64_t b, int64_t c, int64_t d,
                int64_t h, int64_t w) const;
  /// B*C, the number of (batch, channel) planes.
  int64_t planes() const { return batch * channels; }
};

/// Reads B, C, D, H, W from `shape` (5-D, in `layout`); throws neuronsim::Error naming
/// `kernel` and `tensor` when it is not 5-D or has a zero extent.
void readInputShape(std::string_view kernel, std::string_view tensor,
                    const std::vector<int64_t>& shape, PoolLayout layout, PoolingConfig& config);

/// Checks the window against the input: k >= 1, s >= 1, 0 <= p <= k/2, k <= N + 2p.
/// Throws neuronsim::Error naming `kernel` and the axis.
void validateWindow(std::string_view kernel, const PoolingConfig& config);

/// Throws neuronsim::Error when `shape` of `tensor` differs from `expected`, naming both.
void expectShape(std::string_view kernel, std::string_view tensor,
                 const std::vector<int64_t>& shape, std::string_view what,
                 const std::vector<int64_t>& expected);

}  // namespace neuronsim::kernels
