// conv3d and conv3d_transpose registry entries: tensors, parameters, shapes, program, reference.
#include <optional>
#include <utility>

#include "kernels/conv/conv_build.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_transpose_phases.h"
#include "kernels/reference/conv_ref.h"

namespace neuronsim::kernels {

namespace {

std::vector<ParamSpec> commonParams(const std::string& strideMeaning) {
  return {
      {"stride", ParamType::Int3, "1", strideMeaning, {}},
      {"padding",
       ParamType::Int6,
       "0",
       "zero padding (d_lo, d_hi, h_lo, h_hi, w_lo, w_hi); 1 or 3 values broadcast",
       {}},
      {"dilation", ParamType::Int3, "1", "filter tap spacing (D, H, W)", {}},
      {"activation_fn", ParamType::Enum, "none", "activation after the bias",
       convActivationNames()},
  };
}

std::vector<TensorSpec> convInputs(const std::string& filterMeaning) {
  return {{"x_in", "input [B, C_in, D, H, W]", false},
          {"filters", filterMeaning, false},
          {"bias", "per-channel bias [C_out]", true}};
}

ConvRefParams refParams(const ParamValues& params, bool transpose) {
  ConvRefParams p;
  p.stride = params.getInt3("stride");
  p.padding = params.getInt6("padding");
  p.dilation = params.getInt3("dilation");
  p.activation = params.getString("activation_fn");
  if (transpose) p.outputPadding = params.getInt3("output_padding");
  return p;
}

std::vector<float> biasOf(const HostTensors& inputs) {
  auto it = inputs.find("bias");
  return it == inputs.end() ? std::vector<float>{} : it->second.values;
}

void buildSpec(KernelBuilder& builder, const KernelArgs& args, const ConvCore& core) {
  std::optional<HbmView> bias;
  if (args.hasInput("bias")) bias = args.in("bias");
  if (transposePhasesApply(core, builder.geometry())) {
    buildConvTransposePhases(builder, core, args.dtype, args.in("x_in"), args.in("filters"), bias,
                             args.out("out"), convOptions(args.params), phaseOptions(args.params));
    return;
  }
  buildConv(builder, core, args.dtype, args.in("x_in"), args.in("filters"), bias, args.out("out"),
            convOptions(args.params));
}

ShapeMap shapesOf(const HostTensors& inputs) {
  ShapeMap shapes;
  for (const auto& [name, tensor] : inputs) shapes[name] = tensor.shape;
  return shapes;
}

}  // namespace

KernelSpec conv3dSpec() {
  KernelSpec spec;
  spec.name = "conv3d";
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description =
      "3D convolution (cross-correlation, asymmetric zero padding) + bias + activation, NCDHW";
  spec.inputs = convInputs("filters [Kd, Kh, Kw, C_in, C_out]");
  spec.outputs = {{"out", "output [B, C_out, D_out, H_out, W_out]", false}};
  spec.params = commonParams("output step (D, H, W)");
  for (ParamSpec& p : convScheduleParams()) spec.params.push_back(std::move(p));
  spec.defaultShapes = {{"x_in", {1, 128, 8, 32, 32}}, {"filters", {3, 3, 3, 128, 128}}};
  spec.inferShapes = [](const ShapeMap& inputs, const ParamValues& params) {
    return ShapeMap{{"out", conv3dCore(inputs, params).outputShape()}};
  };
  spec.build = [](KernelBuilder& builder, const KernelArgs& args) {
    ShapeMap shapes;
    for (const auto& [name, view] : args.inputs) shapes[name] = view.shape();
    buildSpec(builder, args, conv3dCore(shapes, args.params));
  };
  spec.reference = [](const HostTensors& inputs, const ParamValues& params) {
    conv3dCore(shapesOf(inputs), params);
    return HostTensors{{"out", conv3dRef(inputs.at("x_in"), inputs.at("filters"), biasOf(inputs),
                                         refParams(params, false))}};
  };
  spec.flops = [](const ShapeMap& inputs, const ParamValues& params) {
    return 2.0 * usefulMacs(conv3dCore(inputs, params));
  };
  // x_in only where a tap reads it; filters, bias and out whole.
  spec.rooflineBytes = [](const ShapeMap& inputs, const ShapeMap& outputs,
                          const ParamValues& params, isa::Dtype dtype) {
    int64_t elements = mustReadInputElements(conv3dCore(inputs, params));
    for (const auto& [name, shape] : inputs)
      if (name != "x_in") elements += shapeElements(shape);
    for (const auto& [name, shape] : outputs) elements += shapeElements(shape);
    return elements * isa::dtypeBytes(dtype);
  };
  return spec;
}

KernelSpec conv3dTransposeSpec() {
  KernelSpec spec;
  spec.name = "conv3d_transpose";
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description =
      "3D transposed convolution (conv_transpose3d, asymmetric padding) + bias + activation, NCDHW";
  spec.inputs =
      convInputs("filters [Kd, Kh, Kw, C_in, C_out] (KDHW_CI_CO) or [Kd, Kh, Kw, C_out, C_in]");
  spec.outputs = {{"out", "output [B, C_out, D_out, H_out, W_out]", false}};
  spec.params = commonParams("input step (D, H, W): the transposed conv's upsampling");
  spec.params.push_back({"output_padding",
                         ParamType::Int3,
                         "0",
                         "extra outputs on the high side, < max(stride, dilation)",
                         {}});
  spec.params.push_back({"filter_shape",
                         ParamType::Enum,
                         "KDHW_CI_CO",
                         "storage layout of filters",
                         {"KDHW_CI_CO", "KDHW_CO_CI"}});
  spec.params.push_back(
      {"flip_filter_taps_in_kernel",
       ParamType::Bool,
       "false",
       "true: filters in forward orientation (the kernel flips taps); false: pre-flipped",
       {}});
  spec.params.push_back({"lnc_shard", ParamType::Bool, "false", "accepted and ignored", {}});
  for (ParamSpec& p : convScheduleParams()) spec.params.push_back(std::move(p));
  for (ParamSpec& p : phaseScheduleParams()) spec.params.push_back(std::move(p));
  spec.defaultShapes = {{"x_in", {1, 128, 8, 16, 16}}, {"filters", {2, 2, 2, 128, 64}}};
  spec.inferShapes = [](const ShapeMap& inputs, const ParamValues& params) {
    return ShapeMap{{"out", conv3dTransposeCore(inputs, params).outputShape()}};
  };
  spec.build = [](KernelBuilder& builder, const KernelArgs& args) {
    ShapeMap shapes;
    for (const auto& [name, view] : args.inputs) shapes[name] = view.shape();
    buildSpec(builder, args, conv3dTransposeCore(shapes, args.params));
  };
  spec.reference = [](const HostTensors& inputs, const ParamValues& params) {
    conv3dTransposeCore(shapesOf(inputs), params);
    const HostTensor w =
        transposeWeightRef(inputs.at("filters"), params.getString("filter_shape") == "KDHW_CO_CI",
                           params.getBool("flip_filter_taps_in_kernel"));
    return HostTensors{
        {"out", conv3dTransposeRef(inputs.at("x_in"), w, biasOf(inputs), refParams(params, true))}};
  };
  spec.flops = [](const ShapeMap& inputs, const ParamValues& params) {
    return 2.0 * usefulMacs(conv3dTransposeCore(inputs, params));
  };
  return spec;
}

}  // namespace neuronsim::kernels
