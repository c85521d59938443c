// Parameter table and parsing shared by the four pooling kernels.

#include "kernels/pooling/pooling_params.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

PoolLayout layoutParam(std::string_view kernel, const ParamValues& params, const std::string& name,
                       PoolLayout fallback) {
  if (!params.has(name)) return fallback;
  const std::string& text = params.getString(name);
  if (text.empty()) return fallback;
  if (text == "NCDHW") return PoolLayout::Ncdhw;
  if (text == "NDHWC") return PoolLayout::Ndhwc;
  throw Error(fmt::format("{}: {} '{}' is not NCDHW or NDHWC", kernel, name, text));
}

Spatial int3Param(const ParamValues& params, const std::string& name, const Spatial& fallback) {
  if (!params.has(name)) return fallback;
  const std::array<int64_t, 3> value = params.getInt3(name);
  return {value[0], value[1], value[2]};
}

}  // namespace

std::vector<ParamSpec> poolingParamSpecs() {
  const std::vector<std::string> layouts{"NCDHW", "NDHWC"};
  return {
      {"kernel_size", ParamType::Int3, "2", "pooling window (kD, kH, kW); an int broadcasts", {}},
      {"stride", ParamType::Int3, "", "window step (sD, sH, sW); defaults to kernel_size", {}},
      {"padding", ParamType::Int3, "0", "implicit padding (pD, pH, pW) on both sides, <= k/2", {}},
      {"data_format", ParamType::Enum, "NCDHW", "layout of input_tensor and grad_input", layouts},
      {"output_format", ParamType::Enum, "",
       "layout of the forward output / grad_output; defaults to data_format", layouts},
  };
}

PoolingConfig poolingConfig(std::string_view kernel, const Shape& inputShape,
                            const ParamValues& params) {
  PoolingConfig config;
  config.dataFormat = layoutParam(kernel, params, "data_format", PoolLayout::Ncdhw);
  config.outputFormat = layoutParam(kernel, params, "output_format", config.dataFormat);
  readInputShape(kernel, "input_tensor", inputShape, config.dataFormat, config);
  config.kernel = int3Param(params, "kernel_size", {2, 2, 2});
  config.stride = int3Param(params, "stride", config.kernel);
  config.padding = int3Param(params, "padding", {0, 0, 0});
  validateWindow(kernel, config);
  // A stride past the padded input leaves one window on that axis (legal in PyTorch); any such
  // stride gives the same windows, so the plan sees the smallest one.
  for (int a = 0; a < 3; ++a)
    config.stride[a] = std::min(config.stride[a], config.input[a] + 2 * config.padding[a]);
  return config;
}

}  // namespace neuronsim::kernels
