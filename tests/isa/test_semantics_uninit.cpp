// Reads of never-written SBUF/PSUM: recorded once per operand per instruction, and seen as NaN.
#include <doctest/doctest.h>

#include <cmath>

#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

TEST_CASE("a never-written source is recorded once and reads as NaN") {
  Machine mc;
  put(mc.memory, sb(0, 64, 100, 0), std::vector<float>(6400, 1.0f));
  Instruction inst = make(Opcode::TensorTensor, Engine::Vector, sb(0, 64, 100, 2048),
                          {sb(0, 64, 100, 0), sb(0, 64, 100, 1024)});
  inst.op0 = AluOp::Add;
  mc.run(inst, 7);
  REQUIRE(mc.memory.uninitializedReads().size() == 1);
  CHECK(mc.memory.uninitializedReads()[0].instruction == 7);
  CHECK(mc.memory.uninitializedReads()[0].operand == "srcs[1]");
  const std::vector<float> out = get(mc.memory, sb(0, 64, 100, 2048));
  CHECK(std::isnan(out.front()));
  CHECK(std::isnan(out.back()));
  CHECK(mc.memory.isWritten(Space::Sbuf, 63, 2048, 400));  // dst is marked even though NaN
}

TEST_CASE("one missing element among written ones is found but gaps a strided read skips are not") {
  Machine mc;
  // Write elements 0, 2, 4, 6 of partition 0 only.
  put(mc.memory, chip(Space::Sbuf, 0, 1, 0, {{2, 4}}), {1, 2, 3, 4});
  SUBCASE("strided read of the written elements") {
    mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 4, 64),
                {chip(Space::Sbuf, 0, 1, 0, {{2, 4}})}),
           1);
    CHECK(mc.memory.uninitializedReads().empty());
    CHECK(get(mc.memory, sb(0, 1, 4, 64)) == std::vector<float>{1, 2, 3, 4});
  }
  SUBCASE("dense read hits the gaps") {
    mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 7, 64), {sb(0, 1, 7, 0)}), 2);
    REQUIRE(mc.memory.uninitializedReads().size() == 1);
    CHECK(mc.memory.uninitializedReads()[0].instruction == 2);
    CHECK(std::isnan(get(mc.memory, sb(0, 1, 7, 64))[1]));
  }
  SUBCASE("a partly written element (half its bytes) counts as unwritten") {
    mc.memory.markWritten(Space::Sbuf, 0, 4, 2);
    mc.run(make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, 2, 64), {sb(0, 1, 2, 0)}), 3);
    CHECK(mc.memory.uninitializedReads().size() == 1);
  }
}

TEST_CASE("bias, scale and scalar operands are named") {
  Machine mc;
  put(mc.memory, sb(0, 2, 2, 0), {1, 2, 3, 4});
  Instruction act = make(Opcode::Activation, Engine::Scalar, sb(0, 2, 2, 64), {sb(0, 2, 2, 0)});
  act.bias = sb(0, 2, 1, 128);
  act.scale.vec = sb(0, 2, 1, 256);
  mc.run(act, 3);
  Instruction ts = make(Opcode::TensorScalar, Engine::Vector, sb(0, 2, 2, 64), {sb(0, 2, 2, 0)});
  ts.op0 = AluOp::Add;
  ts.operand0.vec = sb(0, 2, 1, 512);
  ts.op1 = AluOp::Add;
  ts.operand1.vec = sb(0, 2, 1, 768);
  mc.run(ts, 4);
  const auto& r = mc.memory.uninitializedReads();
  REQUIRE(r.size() == 4);
  CHECK(r[0].instruction == 3);
  CHECK(r[0].operand == "scale");
  CHECK(r[1].operand == "bias");
  CHECK(r[2].instruction == 4);
  CHECK(r[2].operand == "operand0");
  CHECK(r[3].operand == "operand1");
}

TEST_CASE("a DMA of never-written SBUF to HBM is recorded and lands as NaN") {
  Machine mc({{"out", {4}, Dtype::Fp32, TensorKind::Output}});
  Instruction inst =
      make(Opcode::DmaCopy, Engine::Sync, hbmView(0, 1, 0, 0, {{1, 4}}), {sb(0, 1, 4, 0)});
  mc.run(inst, 9);
  REQUIRE(mc.memory.uninitializedReads().size() == 1);
  CHECK(mc.memory.uninitializedReads()[0].instruction == 9);
  CHECK(mc.memory.uninitializedReads()[0].operand == "srcs[0]");
  for (float v : mc.memory.getTensor(0)) CHECK(std::isnan(v));
}
