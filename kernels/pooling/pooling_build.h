#pragma once
// Program emitters of the four pooling kernels, on HBM views already declared.

#include "kernels/builder/kernel_builder.h"
#include "kernels/pooling/pooling_config.h"
#include "kernels/pooling/pooling_schedule.h"

namespace neuronsim::kernels {

/// out = average pool of input (count_include_pad).
void buildAvgPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out, const PoolSchedule& schedule);
/// out = max pool of input (-inf padding).
void buildMaxPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out, const PoolSchedule& schedule);
/// gradInput = separable spread of gradOutput with 1/(kD*kH*kW).
void buildAvgPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& gradInput,
                            const PoolSchedule& schedule);
/// gradInput = each window's gradient at its first maximal input, or its last NaN when the
/// window's maximum is NaN (keyed max sweeps over the taps, then predicated copies).
void buildMaxPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& input,
                            const HbmView& outputTensor, const HbmView& gradInput,
                            const PoolSchedule& schedule);

}  // namespace neuronsim::kernels
