// Host cost of the functional semantics: a 128x512 tensor_tensor (fp32, bf16) and a 128x128x512
// matmul, the per-instruction work of a timed run with numerics.
#include <chrono>
#include <cstdio>

#include "isa/memory_state.h"
#include "isa/semantics.h"

namespace {

using namespace neuronsim::isa;

AccessPattern sbuf(int64_t offset, int32_t partitions, int64_t free, Dtype dtype) {
  AccessPattern ap;
  ap.dtype = dtype;
  ap.partitionCount = partitions;
  ap.offset = offset;
  ap.dims = {{1, free}};
  return ap;
}

/// Milliseconds per execution of `inst`, averaged over `runs` after one warm-up run.
double msPerRun(const Instruction& inst, MemoryState& memory, int runs) {
  execute(inst, 0, memory);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) execute(inst, 0, memory);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
             .count() /
         runs;
}

}  // namespace

int main() {
  Program program;
  MemoryState memory(program, Geometry{});
  for (int32_t p = 0; p < 128; ++p) memory.markWritten(Space::Sbuf, p, 0, 65536);
  for (int32_t p = 0; p < 128; ++p) memory.markWritten(Space::Psum, p, 0, 2048);
  for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
    Instruction add;
    add.opcode = Opcode::TensorTensor;
    add.op0 = AluOp::Add;
    add.dst = sbuf(16384, 128, 512, dtype);
    add.srcs = {sbuf(0, 128, 512, dtype), sbuf(4096, 128, 512, dtype)};
    std::printf("tensor_tensor 128x512 %s: %.3f ms\n", dtypeName(dtype).data(),
                msPerRun(add, memory, 50));
  }
  Instruction mm;
  mm.opcode = Opcode::NcMatmul;
  mm.engine = Engine::Tensor;
  mm.dst = sbuf(0, 128, 512, Dtype::Fp32);
  mm.dst.space = Space::Psum;
  mm.srcs = {sbuf(32768, 128, 128, Dtype::Bf16), sbuf(40960, 128, 512, Dtype::Bf16)};
  std::printf("nc_matmul 128x128x512 bf16: %.3f ms\n", msPerRun(mm, memory, 10));
  return 0;
}
