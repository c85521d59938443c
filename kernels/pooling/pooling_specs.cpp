// The four pooling kernels' registry entries: tensors, parameters, shapes and references.

#include <fmt/format.h>

#include <optional>

#include "isa/error.h"
#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_kernels.h"
#include "kernels/pooling/pooling_params.h"
#include "kernels/pooling/pooling_schedule.h"
#include "kernels/pooling/pooling_slabs.h"
#include "kernels/reference/pooling_ref.h"

namespace neuronsim::kernels {

namespace {

const Shape kDefaultInput{2, 64, 16, 16, 16};
const Shape kDefaultOutput{2, 64, 8, 8, 8};

const Shape& shapeOf(const ShapeMap& shapes, const std::string& kernel, const std::string& name) {
  const auto it = shapes.find(name);
  if (it == shapes.end()) throw Error(fmt::format("{}: input {} is missing", kernel, name));
  return it->second;
}

PoolingConfig configOf(const std::string& kernel, const ShapeMap& shapes,
                       const ParamValues& params) {
  return poolingConfig(kernel, shapeOf(shapes, kernel, "input_tensor"), params);
}

PoolingConfig configOf(const std::string& kernel, const HostTensors& tensors,
                       const ParamValues& params) {
  return poolingConfig(kernel, tensors.at("input_tensor").shape, params);
}

/// The roofline's bytes: the named inputs and every output, each once at the kernel dtype
/// (pooling outputs have the kernel dtype).
std::function<int64_t(const ShapeMap&, const ShapeMap&, const ParamValues&, isa::Dtype)> rooflineOf(
    std::vector<std::string> needed) {
  return [needed](const ShapeMap& inputs, const ShapeMap& outputs, const ParamValues&,
                  isa::Dtype dtype) {
    int64_t elements = 0;
    for (const std::string& name : needed) {
      const auto it = inputs.find(name);
      if (it != inputs.end()) elements += shapeElements(it->second);
    }
    for (const auto& [name, shape] : outputs) elements += shapeElements(shape);
    return elements * isa::dtypeBytes(dtype);
  };
}

/// The problem a kernel runs: `config` itself, its slab problem when the schedule's layout
/// puts D and H slabs on partitions (chooseSlabs), else its halo slab problem when windows
/// overlap (haloSlabConfig; tensors keep their views); `view` reshapes each tensor to match.
struct RunLayout {
  PoolingConfig config;
  std::optional<SlabSplit> slabs;

  RunLayout(const std::string& kernel, const PoolingConfig& given, const PoolSchedule& schedule,
            int32_t partitions, HaloKind kind)
      : config(given) {
    const std::optional<PoolingConfig> halo = haloSlabConfig(given, schedule, kind, partitions);
    slabs = chooseSlabs(kernel, given, schedule, partitions, halo.has_value());
    if (slabs) {
      config = slabConfig(given, *slabs);
    } else if (halo) {
      config = *halo;
    }
  }
  /// `schedule` with the halo layout's load queues: all of the loads' half of the machine's
  /// queues (8 of 16) unless `params` sets them, as its loads
  /// are one DMA per H slab over a few partitions' DMA engines (1x2x32x128x128 avg forward
  /// k3 s2 p1: 215.1 us with 1 queue, 65.8 us with 8).
  PoolSchedule tuned(PoolSchedule schedule, const ParamValues& params) const {
    if (config.halo.axes[1].slabs > 1 && !params.has("load_queues"))
      schedule.loadQueues = schedule.firstStoreQueue;
    return schedule;
  }
  HbmView view(const HbmView& tensor, PoolLayout layout) const {
    return slabs ? slabView(tensor, layout, *slabs) : tensor;
  }
};

/// The API parameters followed by the schedule parameters `knobs` names.
std::vector<ParamSpec> withSchedule(ScheduleKnobs knobs) {
  std::vector<ParamSpec> specs = poolingParamSpecs();
  for (ParamSpec& p : poolScheduleParamSpecs(knobs)) specs.push_back(std::move(p));
  return specs;
}

const TensorSpec kInputTensor{"input_tensor", "forward input, data_format layout", false};

KernelSpec forwardSpec(const std::string& name, const std::string& description, bool isMax) {
  KernelSpec spec;
  spec.name = name;
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description = description;
  spec.inputs = {kInputTensor};
  spec.outputs = {{"out", "pooled output, output_format layout", false}};
  spec.params = withSchedule(ScheduleKnobs::Common);
  spec.defaultShapes = {{"input_tensor", kDefaultInput}};
  spec.rooflineBytes = rooflineOf({"input_tensor"});
  spec.inferShapes = [name](const ShapeMap& shapes, const ParamValues& params) {
    return ShapeMap{{"out", configOf(name, shapes, params).outputShape()}};
  };
  spec.build = [name, isMax](KernelBuilder& builder, const KernelArgs& args) {
    const PoolingConfig given = poolingConfig(name, args.in("input_tensor").shape(), args.params);
    const PoolSchedule asked = poolForwardSchedule(args.params, builder.geometry());
    const RunLayout run(name, given, asked, builder.geometry().partitions, HaloKind::Forward);
    const PoolSchedule schedule = run.tuned(asked, args.params);
    const HbmView input = run.view(args.in("input_tensor"), given.dataFormat);
    const HbmView out = run.view(args.out("out"), given.outputFormat);
    if (isMax) {
      buildMaxPool3d(builder, run.config, input, out, schedule);
    } else {
      buildAvgPool3d(builder, run.config, input, out, schedule);
    }
  };
  spec.reference = [name, isMax](const HostTensors& inputs, const ParamValues& params) {
    const PoolingConfig config = configOf(name, inputs, params);
    const std::vector<float>& x = inputs.at("input_tensor").values;
    return HostTensors{
        {"out", {config.outputShape(), isMax ? maxPool3dRef(config, x) : avgPool3dRef(config, x)}}};
  };
  return spec;
}

/// Fills grad_output (and output_tensor) from input_tensor (given or default) and the window.
ShapeMap deriveBackwardShapes(const std::string& name, const ShapeMap& given,
                              const ParamValues& params, bool withOutputTensor) {
  ShapeMap shapes = given;
  const Shape input = given.count("input_tensor") ? given.at("input_tensor") : kDefaultInput;
  shapes["input_tensor"] = input;
  const Shape output = poolingConfig(name, input, params).outputShape();
  shapes.emplace("grad_output", output);
  if (withOutputTensor) shapes.emplace("output_tensor", shapes.at("grad_output"));
  return shapes;
}

/// Checks grad_output (and output_tensor, when `withOutputTensor`) against the window.
PoolingConfig backwardConfig(const std::string& name, const ShapeMap& shapes,
                             const ParamValues& params, bool withOutputTensor) {
  const PoolingConfig config = configOf(name, shapes, params);
  const Shape& gradOutput = shapeOf(shapes, name, "grad_output");
  expectShape(name, "grad_output", gradOutput, "input_tensor and kernel_size/stride/padding",
              config.outputShape());
  if (withOutputTensor) {
    const Shape& outputTensor = shapeOf(shapes, name, "output_tensor");
    if (outputTensor != gradOutput) {
      throw Error(fmt::format("{}: output_tensor has shape {} but grad_output has {}", name,
                              shapeText(outputTensor), shapeText(gradOutput)));
    }
  }
  return config;
}

}  // namespace

KernelSpec avgPooling3dSpec() {
  return forwardSpec("avg_pooling_3d", "3D average pooling (zero padding, count_include_pad)",
                     false);
}

KernelSpec maxPooling3dSpec() {
  return forwardSpec("max_pooling_3d", "3D max pooling (-inf padding)", true);
}

KernelSpec avgPooling3dBackwardSpec() {
  const std::string name = "avg_pooling_3d_backward";
  KernelSpec spec;
  spec.name = name;
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description = "backward of 3D average pooling, spread separably along W, H, D";
  spec.inputs = {{"grad_output", "gradient of the forward output, output_format layout", false},
                 {"input_tensor", "forward input (only its shape is read), data_format", false}};
  spec.outputs = {{"grad_input", "gradient of the forward input, data_format layout", false}};
  spec.params = withSchedule(ScheduleKnobs::AvgBackward);
  spec.defaultShapes = {{"grad_output", kDefaultOutput}, {"input_tensor", kDefaultInput}};
  spec.rooflineBytes = rooflineOf({"grad_output"});  // input_tensor: only its shape is read
  spec.deriveShapes = [name](const ShapeMap& given, const ParamValues& params) {
    return deriveBackwardShapes(name, given, params, false);
  };
  spec.inferShapes = [name](const ShapeMap& shapes, const ParamValues& params) {
    return ShapeMap{{"grad_input", backwardConfig(name, shapes, params, false).inputShape()}};
  };
  spec.build = [name](KernelBuilder& builder, const KernelArgs& args) {
    const PoolingConfig given = poolingConfig(name, args.in("input_tensor").shape(), args.params);
    const PoolSchedule asked = poolSchedule(args.params, builder.geometry());
    const RunLayout run(name, given, asked, builder.geometry().partitions, HaloKind::Backward);
    const PoolSchedule schedule = run.tuned(asked, args.params);
    buildAvgPool3dBackward(builder, run.config,
                           run.view(args.in("grad_output"), given.outputFormat),
                           run.view(args.out("grad_input"), given.dataFormat), schedule);
  };
  spec.reference = [name](const HostTensors& inputs, const ParamValues& params) {
    const PoolingConfig config = configOf(name, inputs, params);
    return HostTensors{
        {"grad_input",
         {config.inputShape(), avgPool3dBackwardRef(config, inputs.at("grad_output").values)}}};
  };
  return spec;
}

KernelSpec maxPooling3dBackwardSpec() {
  const std::string name = "max_pooling_3d_backward";
  KernelSpec spec;
  spec.name = name;
  spec.minPartitions = 1;  // tiles sized from the geometry
  spec.description =
      "backward of 3D max pooling: first maximal element per window (last NaN in NaN windows)";
  spec.inputs = {{"grad_output", "gradient of the forward output, output_format layout", false},
                 {"input_tensor", "forward input, data_format layout", false},
                 {"output_tensor", "forward output (window maxima), output_format layout", false}};
  spec.outputs = {{"grad_input", "gradient of the forward input, data_format layout", false}};
  spec.params = withSchedule(ScheduleKnobs::MaxBackward);
  spec.defaultShapes = {{"grad_output", kDefaultOutput},
                        {"input_tensor", kDefaultInput},
                        {"output_tensor", kDefaultOutput}};
  spec.rooflineBytes = rooflineOf({"grad_output", "input_tensor", "output_tensor"});
  spec.deriveShapes = [name](const ShapeMap& given, const ParamValues& params) {
    return deriveBackwardShapes(name, given, params, true);
  };
  spec.inferShapes = [name](const ShapeMap& shapes, const ParamValues& params) {
    return ShapeMap{{"grad_input", backwardConfig(name, shapes, params, true).inputShape()}};
  };
  spec.completeInputs = [name](HostTensors& inputs, const std::set<std::string>& generated,
                               const ParamValues& params) {
    if (!generated.count("output_tensor") || !inputs.count("input_tensor")) return;
    const PoolingConfig config = configOf(name, inputs, params);
    HostTensor& out = inputs.at("output_tensor");
    std::vector<float> maxima = maxPool3dRef(config, inputs.at("input_tensor").values);
    if (maxima.size() == out.values.size()) out.values = std::move(maxima);
  };
  spec.build = [name](KernelBuilder& builder, const KernelArgs& args) {
    const PoolingConfig given = poolingConfig(name, args.in("input_tensor").shape(), args.params);
    const PoolSchedule asked = poolSchedule(args.params, builder.geometry());
    const RunLayout run(name, given, asked, builder.geometry().partitions, HaloKind::MaxBackward);
    const PoolSchedule schedule = run.tuned(asked, args.params);
    buildMaxPool3dBackward(builder, run.config,
                           run.view(args.in("grad_output"), given.outputFormat),
                           run.view(args.in("input_tensor"), given.dataFormat),
                           run.view(args.in("output_tensor"), given.outputFormat),
                           run.view(args.out("grad_input"), given.dataFormat), schedule);
  };
  spec.reference = [name](const HostTensors& inputs, const ParamValues& params) {
    const PoolingConfig config = configOf(name, inputs, params);
    return HostTensors{
        {"grad_input",
         {config.inputShape(), maxPool3dBackwardRef(config, inputs.at("grad_output").values,
                                                    inputs.at("input_tensor").values,
                                                    inputs.at("output_tensor").values)}}};
  };
  return spec;
}

}  // namespace neuronsim::kernels
