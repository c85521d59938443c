#pragma once
// The inputs of a kernel run: their shapes first (no tensor data read), then their values.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isa/dtype.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

/// Where a run's inputs come from.
struct InputRequest {
  std::vector<std::pair<std::string, std::string>> files;  ///< --input NAME=FILE.npy
  std::vector<std::pair<std::string, Shape>> shapes;       ///< --shape NAME=AxB: generated
  uint64_t seed = 0;                                       ///< of generated inputs
  HostTensors arrays;  ///< inputs given as fp32 values (the Python API's tensors=)
  /// Name the ways to give an input as the Python API does (`NAME=ARRAY`, `shapes=`), not as
  /// the command line does (--input, --shape).
  bool pythonNames = false;
};

/// The shapes the request gives (files' .npy headers, arrays, --shape), no parameters needed.
/// Throws neuronsim::Error on an unknown name, a name given twice, or given both ways.
ShapeMap givenInputShapes(const KernelSpec& spec, const InputRequest& request);

/// The shape of every input the run will have: files' .npy headers (no data read), given
/// arrays, --shape, shapes the kernel derives from those (KernelSpec::deriveShapes), and the
/// default shapes when no file or array is given. Throws neuronsim::Error on an unknown name, a
/// name given twice, a bad file, or a required input left without a shape ("KERNEL: input NAME
/// is required: give --input NAME=FILE.npy or --shape NAME=<its default shape> ...").
ShapeMap resolveInputShapes(const KernelSpec& spec, const InputRequest& request,
                            const ParamValues& params);

/// The values of the inputs in `shapes` (from resolveInputShapes): files read, arrays taken
/// (moved out of `request`), the rest generated from the seed, all rounded to `dtype`, then
/// completed by KernelSpec::completeInputs.
HostTensors loadInputs(const KernelSpec& spec, InputRequest request, const ShapeMap& shapes,
                       isa::Dtype dtype, const ParamValues& params);

/// Tensors carrying their shapes alone, for a timing-only run.
HostTensors shapesOnly(const ShapeMap& shapes);

}  // namespace neuronsim::kernels
