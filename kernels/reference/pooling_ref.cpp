// Reference 3D pooling: direct loops over every window, written from the PyTorch definitions.

#include "kernels/reference/pooling_ref.h"

#include <cmath>
#include <limits>

namespace neuronsim::kernels {

namespace {

/// Calls visit(b, c, od, oh, ow, outIndex) for every output element.
template <typename Visit>
void forEachOutput(const PoolingConfig& cfg, Visit visit) {
  const Spatial out = cfg.output();
  for (int64_t b = 0; b < cfg.batch; ++b)
    for (int64_t c = 0; c < cfg.channels; ++c)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow)
            visit(b, c, od, oh, ow, cfg.index(cfg.outputFormat, out, b, c, od, oh, ow));
}

/// Calls tap(inIndex) for every in-bounds element of the window of (od, oh, ow), in (kd, kh,
/// kw) row-major order; stops early when tap returns false. Returns whether a tap was padding.
template <typename Tap>
bool forEachTap(const PoolingConfig& cfg, int64_t b, int64_t c, int64_t od, int64_t oh, int64_t ow,
                Tap tap) {
  bool padded = false;
  for (int64_t kd = 0; kd < cfg.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < cfg.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < cfg.kernel[2]; ++kw) {
        const int64_t d = od * cfg.stride[0] + kd - cfg.padding[0];
        const int64_t h = oh * cfg.stride[1] + kh - cfg.padding[1];
        const int64_t w = ow * cfg.stride[2] + kw - cfg.padding[2];
        if (d < 0 || d >= cfg.input[0] || h < 0 || h >= cfg.input[1] || w < 0 ||
            w >= cfg.input[2]) {
          padded = true;
          continue;
        }
        if (!tap(cfg.index(cfg.dataFormat, cfg.input, b, c, d, h, w))) return padded;
      }
    }
  }
  return padded;
}

int64_t outputCount(const PoolingConfig& cfg) {
  const Spatial out = cfg.output();
  return cfg.planes() * out[0] * out[1] * out[2];
}

int64_t inputCount(const PoolingConfig& cfg) {
  return cfg.planes() * cfg.input[0] * cfg.input[1] * cfg.input[2];
}

float windowScale(const PoolingConfig& cfg) {
  return 1.0f / static_cast<float>(cfg.kernel[0] * cfg.kernel[1] * cfg.kernel[2]);
}

}  // namespace

std::vector<float> avgPool3dRef(const PoolingConfig& cfg, const std::vector<float>& input) {
  std::vector<float> out(outputCount(cfg));
  const float scale = windowScale(cfg);
  forEachOutput(cfg, [&](int64_t b, int64_t c, int64_t od, int64_t oh, int64_t ow, int64_t o) {
    float sum = 0.0f;
    forEachTap(cfg, b, c, od, oh, ow, [&](int64_t i) {
      sum += input[i];
      return true;
    });
    out[o] = sum * scale;
  });
  return out;
}

std::vector<float> maxPool3dRef(const PoolingConfig& cfg, const std::vector<float>& input) {
  std::vector<float> out(outputCount(cfg));
  forEachOutput(cfg, [&](int64_t b, int64_t c, int64_t od, int64_t oh, int64_t ow, int64_t o) {
    float best = -std::numeric_limits<float>::infinity();
    forEachTap(cfg, b, c, od, oh, ow, [&](int64_t i) {
      if (input[i] > best || std::isnan(input[i])) best = input[i];
      return true;
    });
    out[o] = best;
  });
  return out;
}

std::vector<float> avgPool3dBackwardRef(const PoolingConfig& cfg,
                                        const std::vector<float>& gradOutput) {
  std::vector<float> gradInput(inputCount(cfg), 0.0f);
  const float scale = windowScale(cfg);
  forEachOutput(cfg, [&](int64_t b, int64_t c, int64_t od, int64_t oh, int64_t ow, int64_t o) {
    const float g = gradOutput[o] * scale;
    forEachTap(cfg, b, c, od, oh, ow, [&](int64_t i) {
      gradInput[i] += g;
      return true;
    });
  });
  return gradInput;
}

std::vector<float> maxPool3dBackwardRef(const PoolingConfig& cfg,
                                        const std::vector<float>& gradOutput,
                                        const std::vector<float>& input,
                                        const std::vector<float>& outputTensor) {
  std::vector<float> gradInput(inputCount(cfg), 0.0f);
  forEachOutput(cfg, [&](int64_t b, int64_t c, int64_t od, int64_t oh, int64_t ow, int64_t o) {
    const bool nanWindow = std::isnan(outputTensor[o]);
    int64_t target = -1;
    forEachTap(cfg, b, c, od, oh, ow, [&](int64_t i) {
      if (nanWindow) {
        if (std::isnan(input[i])) target = i;  // PyTorch's argmax takes every NaN it meets
        return true;
      }
      if (input[i] != outputTensor[o]) return true;
      target = i;
      return false;
    });
    if (target >= 0) gradInput[target] += gradOutput[o];
  });
  return gradInput;
}

}  // namespace neuronsim::kernels
