#pragma once
// The run pipeline shared by `neuronsim run` and the tests: build, load, simulate, read back.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "isa/memory_state.h"
#include "isa/program.h"
#include "kernels/builder/allocation_record.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"
#include "traces/event.h"

namespace neuronsim::kernels {

enum class RunMode {
  Timed,       ///< the SystemC model with numerics
  TimingOnly,  ///< the SystemC model without numerics: no tensor data at all, no outputs
  Interpret,   ///< the sequential interpreter only (no time)
};

struct RunOptions {
  isa::Dtype dtype = isa::Dtype::Fp32;  ///< kernel dtype (fp32 or bf16)
  RunMode mode = RunMode::Timed;
  traces::EventSink* sink = nullptr;  ///< timed modes: receives events when set
  /// Timed modes: report races (KernelRun::sim.races). Off, an untraced TimingOnly run is
  /// driven by one SystemC thread (sim::SimResult::oneThread); times are the same either way.
  bool detectRaces = true;
  /// Called with the name of each phase as it starts ("building", "simulating", ...).
  std::function<void(const std::string&)> phase;
};

/// The checked shapes of one call: inputs given and outputs inferred.
struct KernelShapes {
  ShapeMap inputs;
  ShapeMap outputs;
};

/// Everything one run produced.
struct KernelRun {
  isa::Program program;
  std::vector<AllocationRecord> allocations;  ///< the builder's SBUF/PSUM allocations (occupancy.h)
  KernelShapes shapes;
  HostTensors outputs;  ///< empty in TimingOnly mode
  sim::SimResult sim;   ///< timed modes only
  std::vector<isa::UninitializedRead> uninitializedReads;
  double buildSeconds = 0;
  double runSeconds = 0;
};

/// Checks that every required input has a shape, no unknown tensor is named, the parameters fit
/// (spec.inferShapes) and every input and output is within isa::kMaxTensorElements. Throws
/// neuronsim::Error naming the culprit.
KernelShapes checkShapes(const KernelSpec& spec, const ShapeMap& inputs, const ParamValues& params);
/// Declares the tensors and builds the (validated) program; fills `allocations`, when given,
/// with the builder's SBUF/PSUM allocation records. A geometry with fewer partitions, or a PE
/// array (peTile) smaller, than spec.minPartitions is refused first (neuronsim::Error naming both).
isa::Program buildKernel(const KernelSpec& spec, const ParamValues& params,
                         const KernelShapes& shapes, isa::Dtype dtype,
                         const isa::Geometry& geometry,
                         std::vector<AllocationRecord>* allocations = nullptr);
/// Builds the program for `shapes` (checkShapes'): a KernelRun with shapes, program, allocations
/// and buildSeconds, nothing simulated yet. `phase`, when set, hears "building K".
KernelRun buildRun(const KernelSpec& spec, const ParamValues& params, KernelShapes shapes,
                   isa::Dtype dtype, const isa::Geometry& geometry,
                   const std::function<void(const std::string&)>& phase = {});
/// Simulates (or interprets) the program buildRun built on `inputs`, which must have the shapes
/// it was built for: fills outputs, sim, uninitializedReads and runSeconds.
void simulateRun(KernelRun& run, const HostTensors& inputs, const sim::MachineConfig& machine,
                 const RunOptions& options);
/// buildRun then simulateRun on `inputs` (fp32 values, converted to the kernel dtype on load).
/// In TimingOnly mode an input may carry its shape alone (no values): no memory is allocated.
KernelRun runKernel(const KernelSpec& spec, const ParamValues& params, const HostTensors& inputs,
                    const sim::MachineConfig& machine, const RunOptions& options);

/// Bytes the kernel must move at minimum: spec.rooflineBytes when set, else every input at the
/// kernel dtype plus every output at its dtype, each once.
int64_t minimumHbmBytes(const KernelSpec& spec, const KernelShapes& shapes, isa::Dtype dtype,
                        const ParamValues& params);
/// Dtype of the kernel's outputs.
isa::Dtype outputDtype(const KernelSpec& spec, isa::Dtype dtype);

/// `shape` filled with standard normal values from `seed` and the tensor's `stream` (its index in
/// the spec's inputs): SplitMix64 -> 53-bit uniforms -> Box-Muller, documented in docs/kernels.md.
std::vector<float> normalValues(const Shape& shape, uint64_t seed, uint64_t stream);
/// Inputs for `shapes` from normalValues, one stream per input in spec order.
HostTensors generateInputs(const KernelSpec& spec, const ShapeMap& shapes, uint64_t seed);
/// Every value rounded through `dtype`.
HostTensors roundedTo(const HostTensors& tensors, isa::Dtype dtype);
/// roundedTo without the copy.
void roundInPlace(HostTensors& tensors, isa::Dtype dtype);

/// max|out - ref| / max(1, max|ref|) over the finite pairs; NaN and Inf must match the
/// reference exactly (else infinity, as on a shape mismatch).
double normalizedError(const HostTensor& out, const HostTensor& ref);
/// The largest normalizedError over the reference's outputs (missing output: infinity).
double maxNormalizedError(const HostTensors& outputs, const HostTensors& reference);
/// The tolerance DESIGN.md section 5 gives: 1e-4 fp32, 2e-2 bf16.
double tolerance(isa::Dtype dtype);

}  // namespace neuronsim::kernels
