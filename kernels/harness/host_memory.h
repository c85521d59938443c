#pragma once
// Host memory a run needs, checked against what the machine has before the run starts.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/geometry.h"
#include "isa/program.h"
#include "kernels/harness/run_kernel.h"

namespace neuronsim::kernels {

/// One item of a memory estimate, e.g. {"HBM tensors", 1 << 30}.
struct MemoryItem {
  std::string what;
  int64_t bytes = 0;
};

/// Bytes the system can still give this process (MemAvailable in /proc/meminfo); nothing when
/// unknown.
std::optional<int64_t> availableHostBytes();

/// Host memory of a kernel run: SBUF and PSUM with their shadows (the simulator's trackers scale
/// alike), and with numerics (not TimingOnly) input values (fp32), HBM tensors at their dtype and
/// outputs read back (and the reference's with `check`).
std::vector<MemoryItem> kernelRunMemory(const KernelSpec& spec, const KernelShapes& shapes,
                                        isa::Dtype dtype, const isa::Geometry& geometry,
                                        RunMode mode, bool check);
/// The same for an assembly program: every HBM tensor, input values and outputs read back.
/// Throws neuronsim::Error on a tensor over the size limits (in every mode).
std::vector<MemoryItem> programRunMemory(const isa::Program& program, const isa::Geometry& geometry,
                                         RunMode mode);

/// Throws neuronsim::Error "<who>: needs about 37.2 GiB of host memory (HBM tensors 16.0 GiB, ...)
/// but 20.1 GiB is available" when the items add up to more than availableHostBytes().
void checkHostMemory(const std::string& who, const std::vector<MemoryItem>& items);

}  // namespace neuronsim::kernels
