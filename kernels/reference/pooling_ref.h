#pragma once
// Plain C++ reference implementations of 3D pooling and its backward passes (PyTorch semantics).

#include <vector>

#include "kernels/pooling/pooling_config.h"

namespace neuronsim::kernels {

/// Average pooling with zero padding, divided by kD*kH*kW. `input` in config.dataFormat;
/// result in config.outputFormat. Sums in fp32.
std::vector<float> avgPool3dRef(const PoolingConfig& config, const std::vector<float>& input);

/// Max pooling with -inf padding; a window holding a NaN gives NaN (PyTorch's max treats NaN
/// as the maximum). `input` in dataFormat; result in outputFormat.
std::vector<float> maxPool3dRef(const PoolingConfig& config, const std::vector<float>& input);

/// Gradient of avgPool3dRef: each output gradient spread over its window with 1/(kD*kH*kW).
/// `gradOutput` in outputFormat; result in dataFormat.
std::vector<float> avgPool3dBackwardRef(const PoolingConfig& config,
                                        const std::vector<float>& gradOutput);

/// Gradient of max pooling: each window's gradient goes to the first input element, in
/// (kd, kh, kw) row-major order, equal to that window's `outputTensor` value (none when no
/// element equals it); when `outputTensor` is NaN, to the window's last NaN element (PyTorch's
/// argmax takes every NaN it meets). gradOutput and outputTensor in outputFormat; input and
/// the result in dataFormat.
std::vector<float> maxPool3dBackwardRef(const PoolingConfig& config,
                                        const std::vector<float>& gradOutput,
                                        const std::vector<float>& input,
                                        const std::vector<float>& outputTensor);

}  // namespace neuronsim::kernels
