// VectorE/ScalarE semantics: activation, element-wise ALU ops, reduce, copies and memset.
//
// Every engine computes in fp32: inputs are read into fp32 temporaries first (so dst may
// overlap a source), the result is rounded to dst's dtype on store.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/semantics_alu.h"
#include "isa/semantics_ops.h"

namespace neuronsim::isa::detail {

namespace {

/// x op s for the running value x and another operand s; `reverse` gives s op x; Bypass
/// skips the op. scalar_tensor_tensor honours reverse0/reverse1 the same way (t = operand0
/// op0 data; dst = tensor op1 t).
float applyScalarOp(AluOp op, float x, float s, bool reverse) {
  if (op == AluOp::Bypass) return x;
  return reverse ? applyAlu(op, s, x) : applyAlu(op, x, s);
}

}  // namespace

void execActivation(const Instruction& inst, int64_t index, MemoryState& memory) {
  const OperandRef data(memory, source(inst, 0));
  OperandRef dst(memory, inst.dst);
  const int64_t parts = dst.partitions();
  const int64_t free = dst.freeSize();
  requireCount("srcs[0] element count", data.size(), dst.size());

  data.checkInitialized(index, "srcs[0]");
  const std::vector<float> x = data.loadFloats();
  const std::vector<float> scale = perPartition(inst.scale, parts, memory, index, "scale");
  std::vector<float> bias;
  if (inst.bias) bias = perPartition(ScalarOperand{0.0f, inst.bias}, parts, memory, index, "bias");

  // y = act(x * scale + bias); the reduction adds the fp32 values of y before they are
  // rounded to dst's dtype, in free-axis order starting from 0.
  std::vector<float> y(x.size());
  std::vector<float> sums(static_cast<size_t>(parts), 0.0f);
  for (int64_t p = 0; p < parts; ++p) {
    float acc = 0.0f;
    for (int64_t i = 0; i < free; ++i) {
      float t = x[p * free + i] * scale[p];
      if (!bias.empty()) t = t + bias[p];
      const float r = applyAct(inst.act, t);
      y[p * free + i] = r;
      acc += r;
    }
    sums[p] = acc;
  }
  std::optional<OperandRef> reduce;
  if (inst.reduceDst) {
    reduce.emplace(memory, *inst.reduceDst);
    requireCount("reduceDst partition count", reduce->partitions(), parts);
  }
  dst.storeFloats(y.data());
  if (reduce) {
    std::vector<float> r(static_cast<size_t>(reduce->size()));
    for (int64_t p = 0; p < parts; ++p)
      for (int64_t i = 0; i < reduce->freeSize(); ++i) r[p * reduce->freeSize() + i] = sums[p];
    reduce->storeFloats(r.data());
  }
}

void execTensorTensor(const Instruction& inst, int64_t index, MemoryState& memory) {
  OperandRef dst(memory, inst.dst);
  const std::vector<float> a = readFloats(memory, source(inst, 0), index, "srcs[0]");
  const std::vector<float> b = readFloats(memory, source(inst, 1), index, "srcs[1]");
  requireCount("srcs[0] element count", static_cast<int64_t>(a.size()), dst.size());
  requireCount("srcs[1] element count", static_cast<int64_t>(b.size()), dst.size());
  std::vector<float> out(a.size());
  const AluOp op = inst.op0;
  for (size_t k = 0; k < out.size(); ++k) out[k] = applyAlu(op, a[k], b[k]);
  dst.storeFloats(out.data());
}

void execTensorScalar(const Instruction& inst, int64_t index, MemoryState& memory) {
  OperandRef dst(memory, inst.dst);
  const int64_t parts = dst.partitions();
  const int64_t free = dst.freeSize();
  std::vector<float> v = readFloats(memory, source(inst, 0), index, "srcs[0]");
  requireCount("srcs[0] element count", static_cast<int64_t>(v.size()), dst.size());
  const std::vector<float> s0 = perPartition(inst.operand0, parts, memory, index, "operand0");
  std::vector<float> s1;
  if (inst.op1 != AluOp::Bypass) s1 = perPartition(inst.operand1, parts, memory, index, "operand1");
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t i = 0; i < free; ++i) {
      float& x = v[p * free + i];
      x = applyScalarOp(inst.op0, x, s0[p], inst.reverse0);
      if (!s1.empty()) x = applyScalarOp(inst.op1, x, s1[p], inst.reverse1);
    }
  dst.storeFloats(v.data());
}

void execScalarTensorTensor(const Instruction& inst, int64_t index, MemoryState& memory) {
  OperandRef dst(memory, inst.dst);
  const int64_t parts = dst.partitions();
  const int64_t free = dst.freeSize();
  std::vector<float> v = readFloats(memory, source(inst, 0), index, "srcs[0]");
  const std::vector<float> t = readFloats(memory, source(inst, 1), index, "srcs[1]");
  requireCount("srcs[0] element count", static_cast<int64_t>(v.size()), dst.size());
  requireCount("srcs[1] element count", static_cast<int64_t>(t.size()), dst.size());
  const std::vector<float> s0 = perPartition(inst.operand0, parts, memory, index, "operand0");
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t i = 0; i < free; ++i) {
      const int64_t k = p * free + i;
      v[k] = applyScalarOp(inst.op1, applyScalarOp(inst.op0, v[k], s0[p], inst.reverse0), t[k],
                           inst.reverse1);
    }
  dst.storeFloats(v.data());
}

void execTensorReduce(const Instruction& inst, int64_t index, MemoryState& memory) {
  const AccessPattern& src = source(inst, 0);
  if (inst.op0 != AluOp::Add && inst.op0 != AluOp::Max && inst.op0 != AluOp::Min)
    throw Error(fmt::format("op {} is not add, max or min", aluOpName(inst.op0)));
  OperandRef dst(memory, inst.dst);
  const std::vector<float> v = readFloats(memory, src, index, "srcs[0]");
  // The trailing `reduceAxes` dims (all dims when there are fewer) form the inner block.
  int64_t inner = 1;
  const size_t axes = static_cast<size_t>(std::max(0, inst.reduceAxes));
  for (size_t j = src.dims.size() > axes ? src.dims.size() - axes : 0; j < src.dims.size(); ++j)
    inner *= src.dims[j].num;
  const int64_t parts = src.partitionCount;
  const int64_t free = src.freeSize();
  const int64_t outer = inner > 0 ? free / inner : 0;
  requireCount("dst partition count", dst.partitions(), parts);
  requireCount("dst free size (kept dims)", dst.freeSize(), outer);
  std::vector<float> out(static_cast<size_t>(parts * outer));
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t o = 0; o < outer; ++o) {
      const float* block = v.data() + p * free + o * inner;
      float acc = block[0];
      for (int64_t j = 1; j < inner; ++j) acc = applyAlu(inst.op0, acc, block[j]);
      out[p * outer + o] = inst.negate ? -acc : acc;
    }
  dst.storeFloats(out.data());
}

void execCopyPredicated(const Instruction& inst, int64_t index, MemoryState& memory) {
  const std::vector<float> pred = readFloats(memory, source(inst, 0), index, "srcs[0]");
  const OperandRef src(memory, source(inst, 1));
  OperandRef dst(memory, inst.dst);
  requireCount("srcs[0] element count", static_cast<int64_t>(pred.size()), dst.size());
  requireCount("srcs[1] element count", src.size(), dst.size());
  src.checkInitialized(index, "srcs[1]");
  const int64_t free = dst.freeSize();
  if (src.dtype() == dst.dtype()) {
    const std::vector<std::byte> raw = src.loadRaw();
    const int64_t w = src.elementBytes();
    for (int64_t p = 0; p < dst.partitions(); ++p)
      for (int64_t i = 0; i < free; ++i)
        if (pred[p * free + i] != 0.0f) dst.storeRawOne(p, i, raw.data() + (p * free + i) * w);
  } else {
    const std::vector<float> v = src.loadFloats();
    for (int64_t p = 0; p < dst.partitions(); ++p)
      for (int64_t i = 0; i < free; ++i)
        if (pred[p * free + i] != 0.0f) dst.storeOne(p, i, v[p * free + i]);
  }
}

void execMemset(const Instruction& inst, int64_t, MemoryState& memory) {
  OperandRef dst(memory, inst.dst);
  const std::vector<float> v(static_cast<size_t>(dst.size()), inst.value);
  dst.storeFloats(v.data());
}

}  // namespace neuronsim::isa::detail
