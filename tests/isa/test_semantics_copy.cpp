// tensor_reduce, tensor_copy with casts, the predicated copy and memset.
#include <doctest/doctest.h>

#include <cmath>

#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

/// data [2 parts, dims [2,3]]: p0 [[1,2,3],[4,5,6]], p1 [[-1,7,0],[2,2,2]].
std::vector<float> reduce(AluOp op, int32_t axes, bool negate, int64_t outFree) {
  Machine mc;
  put(mc.memory, sb(0, 2, 6, 0), {1, 2, 3, 4, 5, 6, -1, 7, 0, 2, 2, 2});
  Instruction inst = make(Opcode::TensorReduce, Engine::Vector, sb(0, 2, outFree, 64),
                          {chip(Space::Sbuf, 0, 2, 0, {{3, 2}, {1, 3}})});
  inst.op0 = op;
  inst.reduceAxes = axes;
  inst.negate = negate;
  mc.run(inst);
  return get(mc.memory, sb(0, 2, outFree, 64));
}

}  // namespace

TEST_CASE("tensor_reduce over the last axis") {
  CHECK(reduce(AluOp::Add, 1, false, 2) == std::vector<float>{6, 15, 6, 6});
  CHECK(reduce(AluOp::Max, 1, false, 2) == std::vector<float>{3, 6, 7, 2});
  CHECK(reduce(AluOp::Min, 1, false, 2) == std::vector<float>{1, 4, -1, 2});
  CHECK(reduce(AluOp::Add, 1, true, 2) == std::vector<float>{-6, -15, -6, -6});
}

TEST_CASE("tensor_reduce over two axes with negate") {
  CHECK(reduce(AluOp::Add, 2, true, 1) == std::vector<float>{-21, -12});
  CHECK(reduce(AluOp::Max, 2, true, 1) == std::vector<float>{-6, -7});
  CHECK(reduce(AluOp::Min, 2, false, 1) == std::vector<float>{1, -1});
}

TEST_CASE("tensor_reduce over a strided middle view, in row-major order, in fp32") {
  Machine mc;
  put(mc.memory, sb(0, 1, 6, 0), {1.0f, 99.0f, 1e8f, 99.0f, -1e8f, 99.0f});
  // Elements 0, 2, 4: (1 + 1e8) rounds to 1e8, then -1e8 gives 0.
  Instruction inst = make(Opcode::TensorReduce, Engine::Vector, sb(0, 1, 1, 64),
                          {chip(Space::Sbuf, 0, 1, 0, {{2, 3}})});
  inst.op0 = AluOp::Add;
  mc.run(inst);
  CHECK(get(mc.memory, sb(0, 1, 1, 64)) == std::vector<float>{0.0f});
}

TEST_CASE("tensor_copy casts with rounding and saturation, copies same dtype exactly") {
  Machine mc;
  put(mc.memory, sb(0, 1, 4, 0), {1.00390625f, 300.0f, -2.5f, 1e6f});
  SUBCASE("to bf16") {
    mc.run(
        make(Opcode::TensorCopy, Engine::Scalar, sb(0, 1, 4, 64, Dtype::Bf16), {sb(0, 1, 4, 0)}));
    CHECK(get(mc.memory, sb(0, 1, 4, 64, Dtype::Bf16)) ==
          std::vector<float>{1.0f, 300.0f, -2.5f, 999424.0f});
  }
  SUBCASE("to uint8") {
    mc.run(
        make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 4, 64, Dtype::Uint8), {sb(0, 1, 4, 0)}));
    CHECK(get(mc.memory, sb(0, 1, 4, 64, Dtype::Uint8)) == std::vector<float>{1, 255, 0, 255});
  }
  SUBCASE("to fp8_e4m3") {
    mc.run(make(Opcode::TensorCopy, Engine::GpSimd, sb(0, 1, 4, 64, Dtype::Fp8E4m3),
                {sb(0, 1, 4, 0)}));
    CHECK(get(mc.memory, sb(0, 1, 4, 64, Dtype::Fp8E4m3)) ==
          std::vector<float>{1.0f, 288.0f, -2.5f, 448.0f});
  }
  SUBCASE("int32 to int32 is exact") {
    const int32_t big = 16777217;
    std::memcpy(mc.memory.onChip(Space::Sbuf, 0, 128), &big, 4);
    mc.memory.markWritten(Space::Sbuf, 0, 128, 4);
    mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 1, 256, Dtype::Int32),
                {sb(0, 1, 1, 128, Dtype::Int32)}));
    CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Sbuf, 0, 256, 4)) == big);
  }
}

TEST_CASE("tensor_copy_predicated copies where the predicate is nonzero") {
  Machine mc;
  put(mc.memory, sb(0, 2, 2, 0), {0, 1, -0.5f, 0});    // predicate
  put(mc.memory, sb(0, 2, 2, 64), {10, 20, 30, 40});   // src
  put(mc.memory, sb(0, 2, 2, 128), {-1, -1, -1, -1});  // dst before
  mc.run(make(Opcode::CopyPredicated, Engine::Vector, sb(0, 2, 2, 128),
              {sb(0, 2, 2, 0), sb(0, 2, 2, 64)}));
  CHECK(get(mc.memory, sb(0, 2, 2, 128)) == std::vector<float>{-1, 20, 30, -1});

  SUBCASE("unselected elements of fresh memory stay unwritten") {
    mc.run(make(Opcode::CopyPredicated, Engine::Vector, sb(0, 2, 2, 256, Dtype::Bf16),
                {sb(0, 2, 2, 0), sb(0, 2, 2, 64)}));
    CHECK_FALSE(mc.memory.isWritten(Space::Sbuf, 0, 256, 2));
    CHECK(mc.memory.isWritten(Space::Sbuf, 0, 258, 2));
    CHECK(get(mc.memory, sb(0, 2, 2, 256, Dtype::Bf16))[1] == 20.0f);
    CHECK(std::isnan(get(mc.memory, sb(0, 2, 2, 256, Dtype::Bf16))[0]));
  }
}

TEST_CASE("memset writes the value rounded to dst's dtype and marks it written") {
  Machine mc;
  Instruction inst = make(Opcode::Memset, Engine::GpSimd, sb(32, 2, 3, 8, Dtype::Bf16));
  inst.value = 1.00390625f;
  mc.run(inst);
  CHECK(get(mc.memory, sb(32, 2, 3, 8, Dtype::Bf16)) == std::vector<float>(6, 1.0f));
  CHECK(mc.memory.isWritten(Space::Sbuf, 33, 8, 6));
  CHECK_FALSE(mc.memory.isWritten(Space::Sbuf, 34, 8, 2));
  Instruction neg = make(Opcode::Memset, Engine::Vector, ps(0, 1, 2, 0, Dtype::Int32));
  neg.value = -7.0f;
  mc.run(neg);
  CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Psum, 0, 4, 4)) == -7);
}
