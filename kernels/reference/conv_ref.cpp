// Reference conv3d and conv3d_transpose as direct loops over the definitions.
#include "kernels/reference/conv_ref.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

int64_t index5(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return (((a * s[1] + b) * s[2] + c) * s[3] + d) * s[4] + e;
}

void finish(HostTensor& out, const std::vector<double>& acc, const std::vector<float>& bias,
            const std::string& act) {
  const int64_t co = out.shape[1];
  const int64_t plane = out.shape[2] * out.shape[3] * out.shape[4];
  out.values.resize(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t c = static_cast<int64_t>(i) / plane % co;
    const double v = acc[i] + (bias.empty() ? 0.0 : bias[c]);
    out.values[i] = static_cast<float>(activationRef(act, v));
  }
}

/// Calls fn(kd, kh, kw, id, ih, iw) for each filter tap of output (od, oh, ow) that reads
/// inside x (taps over the zero padding are skipped).
template <typename Fn>
void forEachTapInside(const Shape& xs, const Shape& ws, const ConvRefParams& p, int64_t od,
                      int64_t oh, int64_t ow, Fn&& fn) {
  for (int64_t kd = 0; kd < ws[0]; ++kd) {
    const int64_t id = od * p.stride[0] - p.padding[0] + kd * p.dilation[0];
    if (id < 0 || id >= xs[2]) continue;
    for (int64_t kh = 0; kh < ws[1]; ++kh) {
      const int64_t ih = oh * p.stride[1] - p.padding[2] + kh * p.dilation[1];
      if (ih < 0 || ih >= xs[3]) continue;
      for (int64_t kw = 0; kw < ws[2]; ++kw) {
        const int64_t iw = ow * p.stride[2] - p.padding[4] + kw * p.dilation[2];
        if (iw >= 0 && iw < xs[4]) fn(kd, kh, kw, id, ih, iw);
      }
    }
  }
}

}  // namespace

double activationRef(const std::string& name, double v) {
  const double pi = 3.14159265358979323846;
  if (name == "none") return v;
  if (name == "relu") return v > 0 ? v : 0.0;
  if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (name == "tanh") return std::tanh(v);
  if (name == "silu") return v / (1.0 + std::exp(-v));
  if (name == "gelu") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  if (name == "gelu_tanh")
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (v + 0.044715 * v * v * v)));
  throw Error(fmt::format("conv reference: unknown activation '{}'", name));
}

HostTensor conv3dRef(const HostTensor& x, const HostTensor& w, const std::vector<float>& bias,
                     const ConvRefParams& p) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const int64_t batch = xs[0], ci = xs[1], co = ws[4];
  std::array<int64_t, 3> out{};
  for (int a = 0; a < 3; ++a)
    out[a] =
        (xs[2 + a] + p.padding[2 * a] + p.padding[2 * a + 1] - p.dilation[a] * (ws[a] - 1) - 1) /
            p.stride[a] +
        1;
  HostTensor result{{batch, co, out[0], out[1], out[2]}, {}};
  std::vector<double> acc(static_cast<size_t>(shapeElements(result.shape)), 0.0);
  std::vector<double> sum(static_cast<size_t>(co));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t od = 0; od < out[0]; ++od)
      for (int64_t oh = 0; oh < out[1]; ++oh)
        for (int64_t ow = 0; ow < out[2]; ++ow) {
          std::fill(sum.begin(), sum.end(), 0.0);
          forEachTapInside(
              xs, ws, p, od, oh, ow,
              [&](int64_t kd, int64_t kh, int64_t kw, int64_t id, int64_t ih, int64_t iw) {
                for (int64_t c = 0; c < ci; ++c) {
                  const double xv = x.values[index5(xs, b, c, id, ih, iw)];
                  const float* taps = &w.values[index5(ws, kd, kh, kw, c, 0)];
                  for (int64_t o = 0; o < co; ++o) sum[o] += xv * taps[o];
                }
              });
          for (int64_t o = 0; o < co; ++o) acc[index5(result.shape, b, o, od, oh, ow)] = sum[o];
        }
  finish(result, acc, bias, p.activation);
  return result;
}

HostTensor conv3dTransposeRef(const HostTensor& x, const HostTensor& w,
                              const std::vector<float>& bias, const ConvRefParams& p) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const int64_t batch = xs[0], ci = xs[1], co = ws[4];
  std::array<int64_t, 3> out{};
  for (int a = 0; a < 3; ++a)
    out[a] = (xs[2 + a] - 1) * p.stride[a] + p.dilation[a] * (ws[a] - 1) - p.padding[2 * a] -
             p.padding[2 * a + 1] + 1 + p.outputPadding[a];
  HostTensor result{{batch, co, out[0], out[1], out[2]}, {}};
  std::vector<double> acc(static_cast<size_t>(shapeElements(result.shape)), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < ci; ++c)
      for (int64_t id = 0; id < xs[2]; ++id)
        for (int64_t ih = 0; ih < xs[3]; ++ih)
          for (int64_t iw = 0; iw < xs[4]; ++iw) {
            const double v = x.values[index5(xs, b, c, id, ih, iw)];
            for (int64_t kd = 0; kd < ws[0]; ++kd) {
              const int64_t od = id * p.stride[0] - p.padding[0] + kd * p.dilation[0];
              if (od < 0 || od >= out[0]) continue;
              for (int64_t kh = 0; kh < ws[1]; ++kh) {
                const int64_t oh = ih * p.stride[1] - p.padding[2] + kh * p.dilation[1];
                if (oh < 0 || oh >= out[1]) continue;
                for (int64_t kw = 0; kw < ws[2]; ++kw) {
                  const int64_t ow = iw * p.stride[2] - p.padding[4] + kw * p.dilation[2];
                  if (ow < 0 || ow >= out[2]) continue;
                  for (int64_t o = 0; o < co; ++o)
                    acc[index5(result.shape, b, o, od, oh, ow)] +=
                        v * w.values[index5(ws, kd, kh, kw, c, o)];
                }
              }
            }
          }
  finish(result, acc, bias, p.activation);
  return result;
}

HostTensors conv3dBwdRef(const HostTensor& dy, const HostTensor& x, const HostTensor& w,
                         const ConvRefParams& p) {
  const Shape& ys = dy.shape;
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  std::vector<double> dx(x.values.size(), 0.0), dw(w.values.size(), 0.0),
      db(static_cast<size_t>(ys[1]), 0.0);
  for (int64_t b = 0; b < ys[0]; ++b)
    for (int64_t o = 0; o < ys[1]; ++o)
      for (int64_t od = 0; od < ys[2]; ++od)
        for (int64_t oh = 0; oh < ys[3]; ++oh)
          for (int64_t ow = 0; ow < ys[4]; ++ow) {
            const double g = dy.values[index5(ys, b, o, od, oh, ow)];
            db[o] += g;
            forEachTapInside(
                xs, ws, p, od, oh, ow,
                [&](int64_t kd, int64_t kh, int64_t kw, int64_t id, int64_t ih, int64_t iw) {
                  for (int64_t c = 0; c < xs[1]; ++c) {
                    const int64_t xi = index5(xs, b, c, id, ih, iw),
                                  wi = index5(ws, kd, kh, kw, c, o);
                    dx[xi] += g * w.values[wi];
                    dw[wi] += g * x.values[xi];
                  }
                });
          }
  auto toFloat = [](const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
  };
  return {{"dx", {xs, toFloat(dx)}}, {"dw", {ws, toFloat(dw)}}, {"db", {{ys[1]}, toFloat(db)}}};
}

HostTensor transposeWeightRef(const HostTensor& filters, bool coCi, bool flipInKernel) {
  const Shape& s = filters.shape;
  const int64_t ci = coCi ? s[4] : s[3];
  const int64_t co = coCi ? s[3] : s[4];
  HostTensor w{{s[0], s[1], s[2], ci, co}, std::vector<float>(filters.values.size())};
  for (int64_t kd = 0; kd < s[0]; ++kd)
    for (int64_t kh = 0; kh < s[1]; ++kh)
      for (int64_t kw = 0; kw < s[2]; ++kw)
        for (int64_t c = 0; c < ci; ++c)
          for (int64_t o = 0; o < co; ++o) {
            const int64_t sd = flipInKernel ? kd : s[0] - 1 - kd;
            const int64_t sh = flipInKernel ? kh : s[1] - 1 - kh;
            const int64_t sw = flipInKernel ? kw : s[2] - 1 - kw;
            const int64_t from = coCi ? index5(s, sd, sh, sw, o, c) : index5(s, sd, sh, sw, c, o);
            w.values[index5(w.shape, kd, kh, kw, c, o)] = filters.values[from];
          }
  return w;
}

}  // namespace neuronsim::kernels
