// isa::execute: dispatch of one instruction to its opcode's semantics, and the shared helpers.
//
// Decisions that instruction.h leaves open, taken here and tested in tests/isa/test_semantics_*:
// - Engines compute in fp32: every input element is loaded as float, all inputs are read into
//   temporaries before dst is written (overlap is safe), results round to dst's dtype on store.
// - Copies whose src and dst dtypes match (tensor_copy, tensor_copy_predicated, both transposes,
//   dma_copy, dma_transpose) move the bytes: exact for int32 beyond 2^24 and for NaN payloads.
// - nc_matmul: sum[m][n] = 0 + s[0][m]*v[0][n] + ... in k order, in fp32; with `accumulate`
//   dst = old + sum (old read as operand "dst"); without, dst = sum.
// - activation: reduceDst gets the fp32 sum (from 0, in free order) of act(x*scale+bias) before
//   rounding to dst's dtype. bias absent means no addition (so -0 stays -0).
// - tensor_reduce starts from the first element of each block; max/min propagate NaN.
// - Bypass as op0/op1 of tensor_scalar or scalar_tensor_tensor skips that op whatever `reverse`
//   says; scalar_tensor_tensor honours reverse0 (operand0 op0 data) and reverse1 (tensor op1 t).
// - iota into int32 is exact (saturated int64), not rounded through fp32.
// - Every on-chip operand read is checked against the written shadow; one UninitializedRead per
//   operand per instruction. Only elements actually stored are marked written.
#include "isa/semantics.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "isa/error.h"
#include "isa/semantics_ops.h"

namespace neuronsim::isa {

namespace detail {

void requireCount(std::string_view what, int64_t actual, int64_t expected) {
  if (actual != expected)
    throw Error(fmt::format("{} is {} but must be {}", what, actual, expected));
}

const AccessPattern& source(const Instruction& inst, size_t i) {
  if (inst.srcs.size() <= i)
    throw Error(fmt::format("needs srcs[{}] but has {} sources", i, inst.srcs.size()));
  return inst.srcs[i];
}

std::vector<float> readFloats(MemoryState& memory, const AccessPattern& ap, int64_t index,
                              std::string_view name) {
  const OperandRef ref(memory, ap);
  ref.checkInitialized(index, name);
  return ref.loadFloats();
}

std::vector<float> perPartition(const ScalarOperand& s, int64_t partitions, MemoryState& memory,
                                int64_t index, std::string_view name) {
  if (!s.vec) return std::vector<float>(static_cast<size_t>(partitions), s.imm);
  const OperandRef ref(memory, *s.vec);
  if (ref.partitions() != partitions || ref.freeSize() < 1)
    throw Error(fmt::format("{}: per-partition operand has {}x{} elements but must be [{},1]", name,
                            ref.partitions(), ref.freeSize(), partitions));
  ref.checkInitialized(index, name);
  const std::vector<float> all = ref.loadFloats();
  std::vector<float> out(static_cast<size_t>(partitions));
  for (int64_t p = 0; p < partitions; ++p) out[p] = all[p * ref.freeSize()];
  return out;
}

void transposeInto(const OperandRef& src, OperandRef& dst) {
  const int64_t a = src.partitions();
  const int64_t b = src.freeSize();
  requireCount("dst partition count (src free size)", dst.partitions(), b);
  requireCount("dst free size (src partition count)", dst.freeSize(), a);
  if (src.dtype() == dst.dtype()) {
    const std::vector<std::byte> in = src.loadRaw();
    std::vector<std::byte> out(in.size());
    const int64_t w = src.elementBytes();
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        std::copy_n(in.begin() + (i * b + j) * w, w, out.begin() + (j * a + i) * w);
    dst.storeRaw(out.data());
  } else {
    const std::vector<float> in = src.loadFloats();
    std::vector<float> out(in.size());
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j) out[j * a + i] = in[i * b + j];
    dst.storeFloats(out.data());
  }
}

void copyInto(const OperandRef& src, OperandRef& dst) {
  requireCount("dst element count", dst.size(), src.size());
  if (src.dtype() == dst.dtype()) {
    dst.storeRaw(src.loadRaw().data());
  } else {
    dst.storeFloats(src.loadFloats().data());
  }
}

void execTranspose(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef src(memory, source(inst, 0));
  OperandRef dst(memory, inst.dst);
  src.checkInitialized(index, "srcs[0]");
  transposeInto(src, dst);
}

void execCopy(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef src(memory, source(inst, 0));
  OperandRef dst(memory, inst.dst);
  src.checkInitialized(index, "srcs[0]");
  copyInto(src, dst);
}

}  // namespace detail

namespace {

void dispatch(const Instruction& inst, int64_t index, MemoryState& memory) {
  using namespace detail;
  switch (inst.opcode) {
    case Opcode::NcMatmul:
      return execNcMatmul(inst, index, memory);
    case Opcode::NcTranspose:
    case Opcode::DmaTranspose:
      return execTranspose(inst, index, memory);
    case Opcode::Activation:
      return execActivation(inst, index, memory);
    case Opcode::TensorTensor:
      return execTensorTensor(inst, index, memory);
    case Opcode::TensorScalar:
      return execTensorScalar(inst, index, memory);
    case Opcode::ScalarTensorTensor:
      return execScalarTensorTensor(inst, index, memory);
    case Opcode::TensorReduce:
      return execTensorReduce(inst, index, memory);
    case Opcode::TensorCopy:
    case Opcode::DmaCopy:
      return execCopy(inst, index, memory);
    case Opcode::CopyPredicated:
      return execCopyPredicated(inst, index, memory);
    case Opcode::Memset:
      return execMemset(inst, index, memory);
    case Opcode::Iota:
      return execIota(inst, index, memory);
    case Opcode::AffineSelect:
      return execAffineSelect(inst, index, memory);
  }
  throw Error(fmt::format("unknown opcode {}", static_cast<int>(inst.opcode)));
}

}  // namespace

void execute(const Instruction& inst, int64_t index, MemoryState& memory) {
  try {
    dispatch(inst, index, memory);
  } catch (const Error& e) {
    throw Error(fmt::format("instruction {} ({}): {}", index, opcodeName(inst.opcode), e.what()));
  }
}

}  // namespace neuronsim::isa
