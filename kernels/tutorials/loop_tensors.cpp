// Loop-local tensors: one buffer each, then more for the innermost ones while they fit.
#include "kernels/tutorials/loop_tensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace neuronsim::kernels {

namespace {

Tile allocateOne(KernelBuilder& b, const LoopTensorDecl& d, int copy) {
  const std::string name = fmt::format("{}_{}", d.name, copy);
  return d.space == isa::Space::Psum ? b.psum(d.shape, d.dtype, name)
                                     : b.sbuf(d.shape, d.dtype, name);
}

bool fits(const KernelBuilder& b, const LoopTensorDecl& d) {
  int64_t bytes = isa::dtypeBytes(d.dtype);
  for (size_t i = 1; i < d.shape.size(); ++i) bytes *= d.shape[i];
  if (d.space == isa::Space::Sbuf) return bytes <= b.sbufBytesFree();
  return bytes <= b.geometry().psumPartitionBytes - b.psumBytesInUse();
}

}  // namespace

std::vector<LoopTensor> allocateLoopTensors(KernelBuilder& b,
                                            const std::vector<LoopTensorDecl>& decls,
                                            int maxCopies) {
  std::vector<std::vector<Tile>> buffers(decls.size());
  for (size_t i = 0; i < decls.size(); ++i) buffers[i].push_back(allocateOne(b, decls[i], 0));
  std::vector<size_t> order(decls.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return decls[x].depth > decls[y].depth; });
  for (int copy = 1; copy < maxCopies; ++copy)
    for (size_t i : order)
      if (fits(b, decls[i])) buffers[i].push_back(allocateOne(b, decls[i], copy));
  std::vector<LoopTensor> tensors;
  for (auto& tiles : buffers) tensors.emplace_back(std::move(tiles));
  return tensors;
}

}  // namespace neuronsim::kernels
