// DMA semantics: dma_copy between any two spaces (with cast) and dma_transpose.
#include "isa/semantics_ops.h"

namespace neuronsim::isa::detail {

void execDmaCopy(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef src(memory, source(inst, 0));
  OperandRef dst(memory, inst.dst);
  src.checkInitialized(index, "srcs[0]");
  copyInto(src, dst);
}

void execDmaTranspose(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef src(memory, source(inst, 0));
  OperandRef dst(memory, inst.dst);
  src.checkInitialized(index, "srcs[0]");
  transposeInto(src, dst);
}

}  // namespace neuronsim::isa::detail
