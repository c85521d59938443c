#pragma once
// Tensors a tutorial kernel declares inside a loop body, as rings of physical buffers.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/builder/kernel_builder.h"

namespace neuronsim::kernels {

/// One `nl.ndarray` (or `nl.zeros`) declared inside a loop body of a tutorial kernel.
struct LoopTensorDecl {
  isa::Space space = isa::Space::Sbuf;
  std::vector<int64_t> shape;  ///< [partitions, free...]
  isa::Dtype dtype = isa::Dtype::Fp32;
  std::string name;
  int depth = 0;  ///< loop nesting depth of the declaration (outermost loop body: 1)
};

/// The physical buffers behind one loop-local tensor, used round robin: iteration i of the
/// declaring loop body gets buffer i % buffers.size().
class LoopTensor {
 public:
  explicit LoopTensor(std::vector<Tile> buffers) : buffers_(std::move(buffers)) {}
  /// The buffer of the next iteration.
  const Tile& next() { return buffers_[static_cast<size_t>(uses_++) % buffers_.size()]; }
  int copies() const { return static_cast<int>(buffers_.size()); }

 private:
  std::vector<Tile> buffers_;
  int64_t uses_ = 0;
};

/// Allocates every declaration once, then, up to `maxCopies` buffers each, one more per round
/// in order of decreasing depth (innermost first; declaration order among equals) while
/// SBUF/PSUM has room. Our stand-in for the NKI compiler's allocator, which pipelines
/// affine_range iterations by giving loop-local tensors several buffers; see docs/tutorials.md.
/// Throws neuronsim::Error (from the builder) when even one copy of everything does not fit. Result
/// in `decls` order.
std::vector<LoopTensor> allocateLoopTensors(KernelBuilder& b,
                                            const std::vector<LoopTensorDecl>& decls,
                                            int maxCopies);

}  // namespace neuronsim::kernels
