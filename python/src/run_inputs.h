#pragma once
// The input tensors of one Python run: given arrays plus generated ones, in the kernel dtype
// (what `neuronsim run` does with --input, --shape and --seed).

#include <cstdint>

#include "isa/dtype.h"
#include "kernels/registry.h"

namespace neuronsim::python {

/// Inputs for one run of `spec`: `given` tensors (fp32 values) and generated ones
/// (normalValues from `seed`). A generated input takes its shape from `shapes`, else from
/// spec.deriveShapes (given the shapes known so far), else, when nothing is given, from
/// spec.defaultShapes. Every value is rounded to `dtype`; spec.completeInputs then recomputes
/// the generated ones that depend on others. Throws neuronsim::Error for a shape of an
/// unknown input or an input both given and shaped.
kernels::HostTensors prepareInputs(const kernels::KernelSpec& spec, kernels::HostTensors given,
                                   const kernels::ShapeMap& shapes, uint64_t seed, isa::Dtype dtype,
                                   const kernels::ParamValues& params);

}  // namespace neuronsim::python
