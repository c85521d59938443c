#pragma once
// The pooling kernels' API parameters and their translation into a PoolingConfig.

#include <string_view>
#include <vector>

#include "kernels/pooling/pooling_config.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

/// kernel_size, stride, padding, data_format, output_format (as in the NKI API).
std::vector<ParamSpec> poolingParamSpecs();

/// The validated problem for an input of `inputShape` (data_format layout) and `params`.
/// Throws neuronsim::Error naming `kernel` and the culprit.
PoolingConfig poolingConfig(std::string_view kernel, const Shape& inputShape,
                            const ParamValues& params);

}  // namespace neuronsim::kernels
