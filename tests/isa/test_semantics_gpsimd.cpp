// GpSimdE semantics: iota and affine_select.
#include <doctest/doctest.h>

#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

TEST_CASE("iota: offset + channel_multiplier * p + pattern") {
  Machine mc;
  const AccessPattern dst = chip(Space::Sbuf, 0, 2, 0, {{3, 2}, {1, 3}}, Dtype::Int32);
  Instruction inst = make(Opcode::Iota, Engine::GpSimd, dst);
  inst.affine = Affine{{{10, 2}, {-1, 3}}, 5, 100};
  SUBCASE("int32") {
    mc.run(inst);
    CHECK(get(mc.memory, dst) ==
          std::vector<float>{5, 4, 3, 15, 14, 13, 105, 104, 103, 115, 114, 113});
  }
  SUBCASE("fp32, partitions counted from dst's start") {
    inst.dst = chip(Space::Sbuf, 64, 2, 0, {{3, 2}, {1, 3}});
    mc.run(inst);
    CHECK(get(mc.memory, inst.dst) ==
          std::vector<float>{5, 4, 3, 15, 14, 13, 105, 104, 103, 115, 114, 113});
  }
}

TEST_CASE("iota into int32 is exact beyond 2^24") {
  Machine mc;
  Instruction inst = make(Opcode::Iota, Engine::GpSimd, sb(0, 1, 2, 0, Dtype::Int32));
  inst.affine = Affine{{{1, 2}}, 16777217, 0};
  mc.run(inst);
  CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Sbuf, 0, 0, 4)) == 16777217);
  CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Sbuf, 0, 4, 4)) == 16777218);
}

TEST_CASE("affine_select keeps data where affine cmp 0 holds, else fill") {
  Machine mc;
  put(mc.memory, sb(32, 4, 4, 0), std::vector<float>(16, 1.0f));
  Instruction inst =
      make(Opcode::AffineSelect, Engine::GpSimd, sb(32, 4, 4, 64), {sb(32, 4, 4, 0)});
  inst.affine = Affine{{{-1, 4}}, 0, 1};  // p - i
  inst.value = -9999.0f;
  const float f = -9999.0f;
  SUBCASE("is_ge: lower triangle") {
    inst.cmp = AluOp::IsGe;
    mc.run(inst);
    CHECK(get(mc.memory, sb(32, 4, 4, 64)) ==
          std::vector<float>{1, f, f, f, 1, 1, f, f, 1, 1, 1, f, 1, 1, 1, 1});
  }
  SUBCASE("is_equal: diagonal") {
    inst.cmp = AluOp::IsEqual;
    mc.run(inst);
    CHECK(get(mc.memory, sb(32, 4, 4, 64)) ==
          std::vector<float>{1, f, f, f, f, 1, f, f, f, f, 1, f, f, f, f, 1});
  }
  SUBCASE("is_lt with an offset: strictly above the shifted diagonal") {
    inst.cmp = AluOp::IsLt;
    inst.affine.offset = 1;  // p - i + 1 < 0  <=>  i > p + 1
    mc.run(inst);
    CHECK(get(mc.memory, sb(32, 4, 4, 64)) ==
          std::vector<float>{f, f, 1, 1, f, f, f, 1, f, f, f, f, f, f, f, f});
  }
}
