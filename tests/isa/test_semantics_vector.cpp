// VectorE semantics: tensor_tensor ALU ops, tensor_scalar, scalar_tensor_tensor, overlapping
// operands.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> tensorTensor(AluOp op, const std::vector<float>& a, const std::vector<float>& b,
                                Dtype dstDtype = Dtype::Fp32) {
  Machine mc;
  const auto n = static_cast<int64_t>(a.size());
  put(mc.memory, sb(0, 1, n, 0), a);
  put(mc.memory, sb(0, 1, n, 256), b);
  Instruction inst = make(Opcode::TensorTensor, Engine::Vector, sb(0, 1, n, 512, dstDtype),
                          {sb(0, 1, n, 0), sb(0, 1, n, 256)});
  inst.op0 = op;
  mc.run(inst);
  return get(mc.memory, sb(0, 1, n, 512, dstDtype));
}

bool sameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace

TEST_CASE("tensor_tensor: every ALU op on hand-computed values") {
  const std::vector<float> a{6, -2, 0, 3};
  const std::vector<float> b{3, 4, 0, 3};
  struct Row {
    AluOp op;
    std::vector<float> expected;
  };
  const Row rows[] = {
      {AluOp::Bypass, {6, -2, 0, 3}},       {AluOp::Add, {9, 2, 0, 6}},
      {AluOp::Subtract, {3, -6, 0, 0}},     {AluOp::Multiply, {18, -8, 0, 9}},
      {AluOp::Divide, {2, -0.5f, kNan, 1}}, {AluOp::Max, {6, 4, 0, 3}},
      {AluOp::Min, {3, -2, 0, 3}},          {AluOp::IsEqual, {0, 0, 1, 1}},
      {AluOp::NotEqual, {1, 1, 0, 0}},      {AluOp::IsLt, {0, 1, 0, 0}},
      {AluOp::IsLe, {0, 1, 1, 1}},          {AluOp::IsGt, {1, 0, 0, 0}},
      {AluOp::IsGe, {1, 0, 1, 1}},
  };
  for (const Row& row : rows) {
    CAPTURE(aluOpName(row.op));
    CHECK(sameFloats(tensorTensor(row.op, a, b), row.expected));
  }
}

TEST_CASE("tensor_tensor: IEEE division by zero, NaN in max/min and comparisons") {
  CHECK(sameFloats(tensorTensor(AluOp::Divide, {1, -1, 0}, {0, 0, -0.0f}), {kInf, -kInf, kNan}));
  CHECK(sameFloats(tensorTensor(AluOp::Max, {kNan, 1}, {1, kNan}), {kNan, kNan}));
  CHECK(sameFloats(tensorTensor(AluOp::Min, {kNan, 1}, {1, kNan}), {kNan, kNan}));
  CHECK(sameFloats(tensorTensor(AluOp::IsEqual, {kNan}, {kNan}), {0}));
  CHECK(sameFloats(tensorTensor(AluOp::NotEqual, {kNan}, {kNan}), {1}));
  CHECK(sameFloats(tensorTensor(AluOp::IsGe, {kNan}, {1}), {0}));
}

TEST_CASE("tensor_tensor: mixed input dtypes, fp32 compute, rounded on store") {
  Machine mc;
  put(mc.memory, sb(0, 2, 2, 0, Dtype::Bf16), {1, 2, 3, 4});
  put(mc.memory, sb(0, 2, 2, 64), {0.00390625f, 0.01171875f, 1e-3f, -0.5f});
  Instruction inst = make(Opcode::TensorTensor, Engine::Vector, sb(0, 2, 2, 128, Dtype::Bf16),
                          {sb(0, 2, 2, 0, Dtype::Bf16), sb(0, 2, 2, 64)});
  inst.op0 = AluOp::Add;
  mc.run(inst);
  // 1+2^-8 ties to 1; 2+3*2^-8 is 0.75 ulp above 2, rounds up to 2.015625; 3.001 -> 3; 3.5.
  CHECK(get(mc.memory, sb(0, 2, 2, 128, Dtype::Bf16)) ==
        std::vector<float>{1.0f, 2.015625f, 3.0f, 3.5f});
}

TEST_CASE("tensor_scalar: immediate and per-partition operands with reverse flags") {
  Machine mc;
  const AccessPattern data = sb(0, 2, 2, 0);
  const AccessPattern vec = sb(0, 2, 1, 64);
  put(mc.memory, data, {1, 2, 3, 4});
  put(mc.memory, vec, {2, -1});
  Instruction inst = make(Opcode::TensorScalar, Engine::Vector, sb(0, 2, 2, 128), {data});
  inst.op0 = AluOp::Subtract;
  inst.operand0.imm = 10;

  SUBCASE("reverse0: 10 - x, then times the partition's scalar") {
    inst.reverse0 = true;
    inst.op1 = AluOp::Multiply;
    inst.operand1.vec = vec;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 128)) == std::vector<float>{18, 16, -7, -6});
  }
  SUBCASE("x - 10, then reverse1: scalar / t") {
    inst.op1 = AluOp::Divide;
    inst.operand1.vec = vec;
    inst.reverse1 = true;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 128)) ==
          std::vector<float>{2.0f / -9, 2.0f / -8, -1.0f / -7, -1.0f / -6});
  }
  SUBCASE("op1 bypass skips the second op and does not read operand1") {
    inst.op1 = AluOp::Bypass;
    inst.operand1.vec = sb(0, 2, 1, 1024);  // never written
    inst.reverse1 = true;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 128)) == std::vector<float>{-9, -8, -7, -6});
    CHECK(mc.memory.uninitializedReads().empty());
  }
  SUBCASE("op0 bypass with reverse still passes the data through") {
    inst.op0 = AluOp::Bypass;
    inst.reverse0 = true;
    inst.op1 = AluOp::Max;
    inst.operand1.imm = 2.5f;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 128)) == std::vector<float>{2.5f, 2.5f, 3, 4});
  }
}

TEST_CASE("tensor_scalar: comparison ops give 1.0 and 0.0") {
  Machine mc;
  put(mc.memory, sb(0, 1, 4, 0), {-1, 0, 1, 2});
  Instruction inst = make(Opcode::TensorScalar, Engine::GpSimd, sb(0, 1, 4, 64), {sb(0, 1, 4, 0)});
  inst.op0 = AluOp::IsGt;
  inst.operand0.imm = 0.5f;
  inst.op1 = AluOp::Multiply;
  inst.operand1.imm = 3;
  mc.run(inst);
  CHECK(get(mc.memory, sb(0, 1, 4, 64)) == std::vector<float>{0, 0, 3, 3});
}

TEST_CASE("scalar_tensor_tensor: (data op0 scalar) op1 tensor") {
  Machine mc;
  put(mc.memory, sb(0, 2, 2, 0), {1, 2, 3, 4});
  put(mc.memory, sb(0, 2, 2, 64), {10, 20, 30, 40});
  put(mc.memory, sb(0, 2, 1, 128), {2, 3});
  Instruction inst = make(Opcode::ScalarTensorTensor, Engine::Vector, sb(0, 2, 2, 256),
                          {sb(0, 2, 2, 0), sb(0, 2, 2, 64)});
  inst.op0 = AluOp::Multiply;
  inst.operand0.vec = sb(0, 2, 1, 128);
  inst.op1 = AluOp::Subtract;
  SUBCASE("plain") {
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 256)) == std::vector<float>{2 - 10, 4 - 20, 9 - 30, 12 - 40});
  }
  SUBCASE("reverse1: tensor op1 t") {
    inst.reverse1 = true;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 256)) == std::vector<float>{8, 16, 21, 28});
  }
}

TEST_CASE("overlapping src and dst behave as if all inputs were read first") {
  Machine mc;
  put(mc.memory, sb(0, 1, 4, 0), {1, 2, 3, 4});
  // dst is the source shifted by one element: a read-as-you-go copy would smear 1 everywhere.
  mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 4, 4), {sb(0, 1, 4, 0)}));
  CHECK(get(mc.memory, sb(0, 1, 5, 0)) == std::vector<float>{1, 1, 2, 3, 4});
  Instruction add =
      make(Opcode::TensorTensor, Engine::Vector, sb(0, 1, 4, 0), {sb(0, 1, 4, 4), sb(0, 1, 4, 0)});
  add.op0 = AluOp::Add;
  mc.run(add);  // dst [0..4) overlaps srcs[0] [1..5) and equals srcs[1]
  CHECK(get(mc.memory, sb(0, 1, 5, 0)) == std::vector<float>{2, 3, 5, 7, 4});
}

TEST_CASE("strided operands pair elements in visiting order") {
  Machine mc;
  // src: 2 partitions, dims [[1,2],[4,3]] -> rows (i0 in 0..1) x columns (i1 step 4).
  put(mc.memory, sb(0, 2, 8, 0), {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17});
  const AccessPattern src = chip(Space::Sbuf, 0, 2, 0, {{1, 2}, {4, 2}});
  mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 2, 4, 64), {src}));
  CHECK(get(mc.memory, sb(0, 2, 4, 64)) == std::vector<float>{0, 4, 1, 5, 10, 14, 11, 15});
  // A negative step walks backwards.
  const AccessPattern rev = chip(Space::Sbuf, 0, 1, 28, {{-1, 8}});
  mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 8, 128), {rev}));
  CHECK(get(mc.memory, sb(0, 1, 8, 128)) == std::vector<float>{7, 6, 5, 4, 3, 2, 1, 0});
}
