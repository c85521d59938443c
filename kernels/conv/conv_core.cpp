// Shape and parameter checks of conv3d and conv3d_transpose, and their mapping onto the conv core.
#include "kernels/conv/conv_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

constexpr const char* kAxes[3] = {"depth", "height", "width"};

/// An activation_fn value and its ScalarE function.
struct ActName {
  const char* name;
  isa::ActFn fn;
};
constexpr ActName kActNames[] = {
    {"none", isa::ActFn::Copy},          {"relu", isa::ActFn::Relu},
    {"sigmoid", isa::ActFn::Sigmoid},    {"tanh", isa::ActFn::Tanh},
    {"silu", isa::ActFn::Silu},          {"gelu", isa::ActFn::Gelu},
    {"gelu_tanh", isa::ActFn::GeluTanh},
};

const Shape& tensorShape(const std::string& kernel, const ShapeMap& inputs,
                         const std::string& name) {
  auto it = inputs.find(name);
  if (it == inputs.end()) throw Error(fmt::format("{}: input {} is missing", kernel, name));
  return it->second;
}

void expectRank(const std::string& kernel, const std::string& name, const Shape& shape,
                const std::string& layout) {
  if (shape.size() != 5)
    throw Error(
        fmt::format("{}: {} has shape {} but must be {}", kernel, name, shapeText(shape), layout));
  for (int64_t v : shape)
    if (v < 1)
      throw Error(
          fmt::format("{}: {} has shape {} with an empty axis", kernel, name, shapeText(shape)));
}

void expectAtLeast(const std::string& kernel, const std::string& name, const Int3& v, int64_t min) {
  for (int a = 0; a < 3; ++a)
    if (v[a] < min)
      throw Error(fmt::format("{}: {} {} is {} but must be at least {}", kernel, name, kAxes[a],
                              v[a], min));
}

/// Batch, channels, spatial extents, filters and bias common to both kernels; `ciAxis` and
/// `coAxis` index the filters' channel axes.
ConvCore commonCore(const std::string& kernel, const ShapeMap& inputs, const ParamValues& params,
                    int ciAxis, int coAxis) {
  const Shape& x = tensorShape(kernel, inputs, "x_in");
  const Shape& f = tensorShape(kernel, inputs, "filters");
  expectRank(kernel, "x_in", x, "[B, C_in, D, H, W]");
  expectRank(kernel, "filters", f,
             ciAxis == 3 ? "[Kd, Kh, Kw, C_in, C_out]" : "[Kd, Kh, Kw, C_out, C_in]");
  ConvCore core;
  core.kernel = kernel;
  core.batch = x[0];
  core.cin = x[1];
  core.in = {x[2], x[3], x[4]};
  core.taps = {f[0], f[1], f[2]};
  core.cout = f[coAxis];
  if (f[ciAxis] != x[1])
    throw Error(
        fmt::format("{}: filters has C_in {} but x_in has {} channels", kernel, f[ciAxis], x[1]));
  auto bias = inputs.find("bias");
  if (bias != inputs.end()) {
    if (bias->second.size() != 1 || bias->second[0] != core.cout)
      throw Error(fmt::format("{}: bias has shape {} but must be [C_out] = [{}]", kernel,
                              shapeText(bias->second), core.cout));
    core.hasBias = true;
  }
  core.dilation = params.getInt3("dilation");
  expectAtLeast(kernel, "dilation", core.dilation, 1);
  return core;
}

}  // namespace

const std::vector<std::string>& convActivationNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ActName& a : kActNames) out.emplace_back(a.name);
    return out;
  }();
  return names;
}

isa::ActFn convActivation(const std::string& kernel, const std::string& name) {
  for (const ActName& a : kActNames)
    if (name == a.name) return a.fn;
  throw Error(fmt::format(
      "{}: activation_fn '{}' is not one of none, relu, sigmoid, tanh, silu, gelu, gelu_tanh",
      kernel, name));
}

namespace {

/// The forward conv of x_in and filters [Kd, Kh, Kw, C_in, C_out] (no bias or activation).
ConvCore forwardCore(const std::string& kernel, const ShapeMap& inputs, const ParamValues& params) {
  ConvCore core = commonCore(kernel, inputs, params, 3, 4);
  const Int3 stride = params.getInt3("stride");
  const std::array<int64_t, 6> pad = params.getInt6("padding");
  expectAtLeast(kernel, "stride", stride, 1);
  core.stride = stride;
  for (int a = 0; a < 3; ++a) {
    const int64_t lo = pad[2 * a], hi = pad[2 * a + 1];
    if (lo < 0 || hi < 0)
      throw Error(
          fmt::format("{}: padding {} ({}, {}) must not be negative", kernel, kAxes[a], lo, hi));
    const int64_t span = core.dilation[a] * (core.taps[a] - 1) + 1;
    const int64_t padded = core.in[a] + lo + hi;
    if (padded < span)
      throw Error(fmt::format("{}: padded x_in {} {} is smaller than the dilated filter {}", kernel,
                              kAxes[a], padded, span));
    core.out[a] = (padded - span) / stride[a] + 1;
    core.padLo[a] = lo;
  }
  return core;
}

}  // namespace

ConvCore conv3dCore(const ShapeMap& inputs, const ParamValues& params) {
  ConvCore core = forwardCore("conv3d", inputs, params);
  core.act = convActivation(core.kernel, params.getString("activation_fn"));
  return core;
}

ConvCore conv3dBwdCore(const ShapeMap& inputs, const ParamValues& params, bool checkDy) {
  const std::string kernel = "conv3d_bwd";
  if (inputs.count("bias")) throw Error(fmt::format("{}: takes no bias input", kernel));
  const ConvCore core = forwardCore(kernel, inputs, params);
  if (!checkDy) return core;
  const Shape& dy = tensorShape(kernel, inputs, "dy");
  const Shape expected = core.outputShape();
  if (dy != expected)
    throw Error(fmt::format("{}: dy has shape {} but stride/padding give {}", kernel, shapeText(dy),
                            shapeText(expected)));
  return core;
}

double usefulMacs(const ConvCore& core) {
  double macs = static_cast<double>(core.batch * core.cin * core.cout);
  for (int a = 0; a < 3; ++a) {
    int64_t pairs = 0;
    for (int64_t o = 0; o < core.out[a]; ++o)
      for (int64_t k = 0; k < core.taps[a]; ++k) {
        const int64_t v = o * core.stride[a] + k * core.dilation[a] - core.padLo[a];
        const int64_t idl = core.inputDilation[a];
        pairs += v >= 0 && v % idl == 0 && v / idl < core.in[a] ? 1 : 0;
      }
    macs *= static_cast<double>(pairs);
  }
  return macs;
}

int64_t mustReadInputElements(const ConvCore& core) {
  int64_t elements = core.batch * core.cin;
  for (int a = 0; a < 3; ++a) {
    std::vector<char> read(static_cast<size_t>(core.in[a]), 0);
    for (int64_t o = 0; o < core.out[a]; ++o)
      for (int64_t k = 0; k < core.taps[a]; ++k) {
        const int64_t v = o * core.stride[a] + k * core.dilation[a] - core.padLo[a];
        const int64_t idl = core.inputDilation[a];
        if (v >= 0 && v % idl == 0 && v / idl < core.in[a]) read[static_cast<size_t>(v / idl)] = 1;
      }
    elements *= std::count(read.begin(), read.end(), 1);
  }
  return elements;
}

ConvCore dxCore(const ConvCore& forward) {
  ConvCore core = forward;
  core.cin = forward.cout;
  core.cout = forward.cin;
  core.in = forward.out;
  core.out = forward.in;
  core.stride = {1, 1, 1};
  core.inputDilation = forward.stride;
  for (int a = 0; a < 3; ++a)
    core.padLo[a] = forward.dilation[a] * (forward.taps[a] - 1) - forward.padLo[a];
  core.flipTaps = true;
  core.filtersCoCi = true;
  core.hasBias = false;
  core.act = isa::ActFn::Copy;
  return core;
}

ConvCore conv3dTransposeCore(const ShapeMap& inputs, const ParamValues& params) {
  const std::string kernel = "conv3d_transpose";
  const bool coCi = params.getString("filter_shape") == "KDHW_CO_CI";
  ConvCore core = commonCore(kernel, inputs, params, coCi ? 4 : 3, coCi ? 3 : 4);
  core.act = convActivation(kernel, params.getString("activation_fn"));
  core.filtersCoCi = coCi;
  core.flipTaps = params.getBool("flip_filter_taps_in_kernel");
  const Int3 stride = params.getInt3("stride");
  const std::array<int64_t, 6> pad = params.getInt6("padding");
  const Int3 outPad = params.getInt3("output_padding");
  expectAtLeast(kernel, "stride", stride, 1);
  for (int a = 0; a < 3; ++a) {
    const int64_t lo = pad[2 * a], hi = pad[2 * a + 1];
    if (lo < 0 || hi < 0)
      throw Error(
          fmt::format("{}: padding {} ({}, {}) must not be negative", kernel, kAxes[a], lo, hi));
    const int64_t limit = std::max(stride[a], core.dilation[a]);
    if (outPad[a] < 0 || outPad[a] >= limit)
      throw Error(fmt::format(
          "{}: output_padding {} is {} but must be in [0, max(stride, dilation)) = [0, {})", kernel,
          kAxes[a], outPad[a], limit));
    const int64_t span = core.dilation[a] * (core.taps[a] - 1);
    core.out[a] = (core.in[a] - 1) * stride[a] + span - lo - hi + 1 + outPad[a];
    if (core.out[a] < 1)
      throw Error(
          fmt::format("{}: output {} would be {} (padding {}+{} exceeds the transposed "
                      "extent)",
                      kernel, kAxes[a], core.out[a], lo, hi));
    core.inputDilation[a] = stride[a];
    core.padLo[a] = span - lo;
  }
  return core;
}

}  // namespace neuronsim::kernels
