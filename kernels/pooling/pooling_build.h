#pragma once
// Program emitters of the four pooling kernels, on HBM views already declared.

#include "kernels/builder/kernel_builder.h"
#include "kernels/pooling/pooling_config.h"

namespace neuronsim::kernels {

/// out = average pool of input (count_include_pad).
void buildAvgPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out);
/// out = max pool of input (-inf padding).
void buildMaxPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out);
/// gradInput = separable spread of gradOutput with 1/(kD*kH*kW).
void buildAvgPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& gradInput);
/// gradInput = each window's gradient at its first maximal input (by masks over the taps).
void buildMaxPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& input,
                            const HbmView& outputTensor, const HbmView& gradInput);

}  // namespace neuronsim::kernels
