// Shape inference and validation of 3D pooling calls.

#include "kernels/pooling/pooling_config.h"

#include <fmt/format.h>

#include "isa/error.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

namespace {

constexpr std::array<char, 3> kAxisNames{'D', 'H', 'W'};

std::vector<int64_t> layoutShape(PoolLayout layout, int64_t b, int64_t c, const Spatial& s) {
  if (layout == PoolLayout::Ncdhw) return {b, c, s[0], s[1], s[2]};
  return {b, s[0], s[1], s[2], c};
}

}  // namespace

std::string_view poolLayoutName(PoolLayout layout) {
  return layout == PoolLayout::Ncdhw ? "NCDHW" : "NDHWC";
}

Spatial PoolingConfig::output() const {
  Spatial out{};
  for (int a = 0; a < 3; ++a) out[a] = (input[a] + 2 * padding[a] - kernel[a]) / stride[a] + 1;
  return out;
}

std::vector<int64_t> PoolingConfig::inputShape() const {
  return layoutShape(dataFormat, batch, channels, input);
}

std::vector<int64_t> PoolingConfig::outputShape() const {
  return layoutShape(outputFormat, batch, channels, output());
}

int64_t PoolingConfig::index(PoolLayout layout, const Spatial& e, int64_t b, int64_t c, int64_t d,
                             int64_t h, int64_t w) const {
  if (layout == PoolLayout::Ncdhw) return (((b * channels + c) * e[0] + d) * e[1] + h) * e[2] + w;
  return (((b * e[0] + d) * e[1] + h) * e[2] + w) * channels + c;
}

void readInputShape(std::string_view kernel, std::string_view tensor,
                    const std::vector<int64_t>& shape, PoolLayout layout, PoolingConfig& config) {
  const std::string who = fmt::format("{}: {}", kernel, tensor);
  if (shape.size() != 5) {
    throw Error(fmt::format("{} has shape {} but must be 5-D {}", who, shapeText(shape),
                            poolLayoutName(layout)));
  }
  for (int64_t extent : shape) {
    if (extent < 1)
      throw Error(fmt::format("{} has shape {} with an extent below 1", who, shapeText(shape)));
  }
  config.batch = shape[0];
  if (layout == PoolLayout::Ncdhw) {
    config.channels = shape[1];
    config.input = {shape[2], shape[3], shape[4]};
  } else {
    config.channels = shape[4];
    config.input = {shape[1], shape[2], shape[3]};
  }
}

void validateWindow(std::string_view kernel, const PoolingConfig& config) {
  const std::string who(kernel);
  for (int a = 0; a < 3; ++a) {
    const std::string axis(1, kAxisNames[a]);
    const int64_t k = config.kernel[a], s = config.stride[a], p = config.padding[a];
    if (k < 1) throw Error(fmt::format("{}: kernel_size {} is below 1 on {}", who, k, axis));
    if (s < 1) throw Error(fmt::format("{}: stride {} is below 1 on {}", who, s, axis));
    if (p < 0) throw Error(fmt::format("{}: padding {} is negative on {}", who, p, axis));
    if (2 * p > k) {
      throw Error(fmt::format("{}: padding {} exceeds kernel_size/2 on {}", who, p, axis));
    }
    if (k > config.input[a] + 2 * p) {
      throw Error(fmt::format("{}: kernel_size {} exceeds the padded input {} on {}", who, k,
                              config.input[a] + 2 * p, axis));
    }
  }
}

void expectShape(std::string_view kernel, std::string_view tensor,
                 const std::vector<int64_t>& shape, std::string_view what,
                 const std::vector<int64_t>& expected) {
  if (shape == expected) return;
  throw Error(fmt::format("{}: {} has shape {} but {} give {}", kernel, tensor, shapeText(shape),
                          what, shapeText(expected)));
}

}  // namespace neuronsim::kernels
