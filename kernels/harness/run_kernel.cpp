// Build, load, run and read back one kernel; input generation and error metrics.
#include "kernels/harness/run_kernel.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "isa/dtype.h"
#include "isa/error.h"
#include "isa/interpreter.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint64_t splitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in (0, 1]: 53 random bits.
double uniform(uint64_t& state) {
  return (static_cast<double>(splitMix64(state) >> 11) + 1.0) * 0x1.0p-53;
}

}  // namespace

KernelShapes checkShapes(const KernelSpec& spec, const ShapeMap& inputs,
                         const ParamValues& params) {
  for (const auto& [name, shape] : inputs) {
    bool known = false;
    for (const TensorSpec& t : spec.inputs) known = known || t.name == name;
    if (!known) throw Error(fmt::format("{}: no input named '{}'", spec.name, name));
    isa::checkedElements(shape, fmt::format("{}: input {}", spec.name, name));
  }
  for (const TensorSpec& t : spec.inputs)
    if (!t.optional && !inputs.count(t.name))
      throw Error(fmt::format("{}: input {} is required", spec.name, t.name));
  KernelShapes shapes;
  shapes.inputs = inputs;
  shapes.outputs = spec.inferShapes(inputs, params);
  for (const auto& [name, shape] : shapes.outputs)
    isa::checkedElements(shape, fmt::format("{}: output {}", spec.name, name));
  return shapes;
}

isa::Dtype outputDtype(const KernelSpec& spec, isa::Dtype dtype) {
  return spec.fp32Outputs ? isa::Dtype::Fp32 : dtype;
}

isa::Program buildKernel(const KernelSpec& spec, const ParamValues& params,
                         const KernelShapes& shapes, isa::Dtype dtype,
                         const isa::Geometry& geometry,
                         std::vector<AllocationRecord>* allocations) {
  if (geometry.partitions < spec.minPartitions)
    throw Error(
        fmt::format("{} is written for at least {} partitions; the machine has {} "
                    "(--set partitions)",
                    spec.name, spec.minPartitions, geometry.partitions));
  if (geometry.peTile() < spec.minPartitions)
    throw Error(fmt::format(
        "{} is written for a PE array of at least {}x{}; the machine's is {}x{} (--set pe_rows, "
        "pe_cols)",
        spec.name, spec.minPartitions, spec.minPartitions, geometry.peRows, geometry.peCols));
  checkMachineRanges(spec, params, geometry);
  KernelBuilder builder(spec.name, geometry);
  KernelArgs args{params, dtype, {}, {}};
  for (const TensorSpec& t : spec.inputs) {
    auto it = shapes.inputs.find(t.name);
    if (it != shapes.inputs.end())
      args.inputs.emplace(t.name, builder.input(t.name, it->second, dtype));
  }
  for (const TensorSpec& t : spec.outputs) {
    auto it = shapes.outputs.find(t.name);
    if (it != shapes.outputs.end())
      args.outputs.emplace(t.name, builder.output(t.name, it->second, outputDtype(spec, dtype)));
  }
  spec.build(builder, args);
  isa::Program program = builder.finish();
  if (allocations) *allocations = builder.allocations();
  return program;
}

KernelRun buildRun(const KernelSpec& spec, const ParamValues& params, KernelShapes shapes,
                   isa::Dtype dtype, const isa::Geometry& geometry,
                   const std::function<void(const std::string&)>& phase) {
  KernelRun run;
  run.shapes = std::move(shapes);
  if (phase) phase(fmt::format("building {}", spec.name));
  const auto start = std::chrono::steady_clock::now();
  run.program = buildKernel(spec, params, run.shapes, dtype, geometry, &run.allocations);
  run.buildSeconds = secondsSince(start);
  // Outputs the kernel declared itself while building (a Python kernel declares its own).
  for (const isa::TensorDecl& t : run.program.tensors)
    if (t.kind == isa::TensorKind::Output) run.shapes.outputs.emplace(t.name, t.shape);
  return run;
}

void simulateRun(KernelRun& run, const HostTensors& inputs, const sim::MachineConfig& machine,
                 const RunOptions& options) {
  const bool numerics = options.mode != RunMode::TimingOnly;
  if (options.phase)
    options.phase(fmt::format("{} {} instructions",
                              options.mode == RunMode::Interpret ? "interpreting" : "simulating",
                              run.program.instructions.size()));
  const auto start = std::chrono::steady_clock::now();
  if (!numerics) {
    sim::SimOptions simOptions;
    simOptions.timingOnly = true;
    simOptions.sink = options.sink;
    simOptions.detectRaces = options.detectRaces;
    run.sim = sim::simulate(run.program, machine, nullptr, simOptions);
    run.runSeconds = secondsSince(start);
    return;
  }
  isa::MemoryState memory(run.program, machine.geometry);
  for (const auto& [name, tensor] : inputs)
    memory.setTensor(run.program.tensorIndex(name), tensor.values);
  if (options.mode == RunMode::Interpret) {
    isa::interpret(run.program, memory);
  } else {
    sim::SimOptions simOptions;
    simOptions.sink = options.sink;
    simOptions.detectRaces = options.detectRaces;
    run.sim = sim::simulate(run.program, machine, &memory, simOptions);
  }
  run.runSeconds = secondsSince(start);
  run.uninitializedReads = memory.uninitializedReads();
  for (const auto& [name, shape] : run.shapes.outputs)
    run.outputs[name] = HostTensor{shape, memory.getTensor(run.program.tensorIndex(name))};
}

KernelRun runKernel(const KernelSpec& spec, const ParamValues& params, const HostTensors& inputs,
                    const sim::MachineConfig& machine, const RunOptions& options) {
  if (options.dtype != isa::Dtype::Fp32 && options.dtype != isa::Dtype::Bf16)
    throw Error(fmt::format("{}: dtype must be fp32 or bf16", spec.name));
  const bool numerics = options.mode != RunMode::TimingOnly;
  ShapeMap inputShapes;
  for (const auto& [name, tensor] : inputs) {
    const bool shapeOnly = !numerics && tensor.values.empty();
    if (!shapeOnly && static_cast<int64_t>(tensor.values.size()) != shapeElements(tensor.shape))
      throw Error(fmt::format("{}: {} has {} values for shape {}", spec.name, name,
                              tensor.values.size(), shapeText(tensor.shape)));
    inputShapes[name] = tensor.shape;
  }
  KernelRun run = buildRun(spec, params, checkShapes(spec, inputShapes, params), options.dtype,
                           machine.geometry, options.phase);
  simulateRun(run, inputs, machine, options);
  return run;
}

int64_t minimumHbmBytes(const KernelSpec& spec, const KernelShapes& shapes, isa::Dtype dtype,
                        const ParamValues& params) {
  if (spec.rooflineBytes) return spec.rooflineBytes(shapes.inputs, shapes.outputs, params, dtype);
  int64_t bytes = 0;
  for (const auto& [name, shape] : shapes.inputs)
    bytes += shapeElements(shape) * isa::dtypeBytes(dtype);
  for (const auto& [name, shape] : shapes.outputs)
    bytes += shapeElements(shape) * isa::dtypeBytes(outputDtype(spec, dtype));
  return bytes;
}

std::vector<float> normalValues(const Shape& shape, uint64_t seed, uint64_t stream) {
  const int64_t n = shapeElements(shape);
  std::vector<float> values(static_cast<size_t>(n));
  uint64_t state = seed * 0xD1B54A32D192ED03ull + (stream + 1) * 0x8CB92BA72F3D8DD7ull;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  for (int64_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform(state)));
    const double theta = kTwoPi * uniform(state);
    values[i] = static_cast<float>(r * std::cos(theta));
    if (i + 1 < n) values[i + 1] = static_cast<float>(r * std::sin(theta));
  }
  return values;
}

HostTensors generateInputs(const KernelSpec& spec, const ShapeMap& shapes, uint64_t seed) {
  HostTensors tensors;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    auto it = shapes.find(spec.inputs[i].name);
    if (it == shapes.end()) continue;
    tensors[it->first] = HostTensor{it->second, normalValues(it->second, seed, i)};
  }
  return tensors;
}

void roundInPlace(HostTensors& tensors, isa::Dtype dtype) {
  for (auto& [name, tensor] : tensors)
    for (float& v : tensor.values) v = isa::roundTo(dtype, v);
}

HostTensors roundedTo(const HostTensors& tensors, isa::Dtype dtype) {
  HostTensors out = tensors;
  roundInPlace(out, dtype);
  return out;
}

double normalizedError(const HostTensor& out, const HostTensor& ref) {
  if (out.shape != ref.shape || out.values.size() != ref.values.size())
    return std::numeric_limits<double>::infinity();
  double maxDiff = 0, maxRef = 1;
  for (size_t i = 0; i < ref.values.size(); ++i) {
    const float o = out.values[i], r = ref.values[i];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      if ((std::isnan(o) && std::isnan(r)) || o == r) continue;  // NaN and Inf match exactly
      return std::numeric_limits<double>::infinity();
    }
    const double diff = std::fabs(static_cast<double>(o) - r);
    maxDiff = std::max(maxDiff, diff);
    maxRef = std::max(maxRef, std::fabs(static_cast<double>(ref.values[i])));
  }
  return maxDiff / maxRef;
}

double maxNormalizedError(const HostTensors& outputs, const HostTensors& reference) {
  double worst = 0;
  for (const auto& [name, ref] : reference) {
    auto it = outputs.find(name);
    worst = std::max(worst, it == outputs.end() ? std::numeric_limits<double>::infinity()
                                                : normalizedError(it->second, ref));
  }
  return worst;
}

double tolerance(isa::Dtype dtype) {
  return dtype == isa::Dtype::Bf16 ? 2e-2 : 1e-4;
}

}  // namespace neuronsim::kernels
