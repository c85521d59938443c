// TensorE semantics: nc_matmul against hand-computed products, accumulation, k order; nc_transpose.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

Instruction matmul(AccessPattern dst, AccessPattern stationary, AccessPattern moving,
                   bool accumulate) {
  Instruction inst = make(Opcode::NcMatmul, Engine::Tensor, std::move(dst),
                          {std::move(stationary), std::move(moving)});
  inst.accumulate = accumulate;
  return inst;
}

}  // namespace

TEST_CASE("nc_matmul: [K=2,M=3] stationary by [K=2,N=4] moving") {
  Machine mc;
  const AccessPattern s = sb(0, 2, 3, 0);
  const AccessPattern v = sb(0, 2, 4, 64);
  const AccessPattern d = ps(0, 3, 4, 0);
  put(mc.memory, s, {1, 2, 3, 4, 5, 6});
  put(mc.memory, v, {1, 0, 2, -1, 0.5f, 1, 0, 2});
  mc.run(matmul(d, s, v, false));
  // dst[m][n] = s[0][m]*v[0][n] + s[1][m]*v[1][n]
  CHECK(get(mc.memory, d) == std::vector<float>{3, 4, 2, 7, 4.5f, 5, 4, 8, 6, 6, 6, 9});

  SUBCASE("accumulate adds onto dst") {
    mc.run(matmul(d, s, v, true));
    CHECK(get(mc.memory, d) == std::vector<float>{6, 8, 4, 14, 9, 10, 8, 16, 12, 12, 12, 18});
  }
  SUBCASE("no accumulate overwrites dst") {
    put(mc.memory, d, std::vector<float>(12, 100.0f));
    mc.run(matmul(d, s, v, false));
    CHECK(get(mc.memory, d) == std::vector<float>{3, 4, 2, 7, 4.5f, 5, 4, 8, 6, 6, 6, 9});
  }
  CHECK(mc.memory.uninitializedReads().empty());
}

TEST_CASE("nc_matmul sums k in order 0..K-1 in fp32") {
  Machine mc;
  const AccessPattern s = sb(0, 3, 1, 0);
  const AccessPattern v = sb(0, 3, 1, 16);
  const AccessPattern d = ps(0, 1, 1, 0);
  put(mc.memory, s, {1, 1, 1});
  put(mc.memory, v, {1.0f, 1e8f, -1e8f});
  mc.run(matmul(d, s, v, false));
  // (0 + 1) + 1e8 rounds to 1e8, minus 1e8 gives 0 (the reverse order would give 1).
  CHECK(get(mc.memory, d) == std::vector<float>{0.0f});
}

TEST_CASE("nc_matmul reads bf16 inputs exactly and writes fp32") {
  Machine mc;
  const AccessPattern s = sb(0, 2, 1, 0, Dtype::Bf16);
  const AccessPattern v = sb(0, 2, 2, 32, Dtype::Bf16);
  const AccessPattern d = ps(0, 1, 2, 0);
  put(mc.memory, s, {1.0078125f, 3.0f});  // 1 + 2^-7 is exact in bf16
  put(mc.memory, v, {1.0078125f, 2.0f, 1.0f, -1.0f});
  mc.run(matmul(d, s, v, false));
  CHECK(get(mc.memory, d) == std::vector<float>{1.0078125f * 1.0078125f + 3.0f, 2.015625f - 3.0f});
}

TEST_CASE("nc_matmul with accumulate on never-written PSUM records the dst read") {
  Machine mc;
  const AccessPattern s = sb(0, 1, 1, 0);
  const AccessPattern v = sb(0, 1, 1, 16);
  put(mc.memory, s, {2});
  put(mc.memory, v, {3});
  mc.run(matmul(ps(0, 1, 1, 0), s, v, true), 5);
  REQUIRE(mc.memory.uninitializedReads().size() == 1);
  CHECK(mc.memory.uninitializedReads()[0].instruction == 5);
  CHECK(mc.memory.uninitializedReads()[0].operand == "dst");
  CHECK(std::isnan(get(mc.memory, ps(0, 1, 1, 0))[0]));
}

TEST_CASE("nc_matmul rejects mismatched K") {
  Machine mc;
  put(mc.memory, sb(0, 2, 1, 0), {1, 1});
  put(mc.memory, sb(0, 3, 1, 16), {1, 1, 1});
  CHECK_THROWS_AS(mc.run(matmul(ps(0, 1, 1, 0), sb(0, 2, 1, 0), sb(0, 3, 1, 16), false)),
                  neuronsim::Error);
}

TEST_CASE("nc_transpose: [2,3] to [3,2], to fp32 or the same dtype") {
  Machine mc;
  const AccessPattern src = sb(0, 2, 3, 0, Dtype::Bf16);
  put(mc.memory, src, {1, 2, 3, 4, 5, 6});
  SUBCASE("Tensor engine into fp32 PSUM") {
    const AccessPattern d = ps(0, 3, 2, 0);
    mc.run(make(Opcode::NcTranspose, Engine::Tensor, d, {src}));
    CHECK(get(mc.memory, d) == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
  SUBCASE("Vector engine, same dtype, bit-exact NaN payload") {
    std::memset(mc.memory.onChip(Space::Sbuf, 1, 2), 0x81,
                1);  // element (1,1): bf16 0x7F81 signalling NaN
    *mc.memory.onChip(Space::Sbuf, 1, 3) = std::byte{0x7F};
    const AccessPattern d = sb(0, 3, 2, 64, Dtype::Bf16);
    mc.run(make(Opcode::NcTranspose, Engine::Vector, d, {src}));
    CHECK(bitsAt(mc.memory, Space::Sbuf, 1, 66, 2) == 0x7F81u);  // dst (1,1)
    CHECK(get(mc.memory, d)[0] == 1.0f);
    CHECK(get(mc.memory, d)[5] == 6.0f);
  }
}

TEST_CASE("nc_transpose copies int32 exactly") {
  Machine mc;
  const AccessPattern src = sb(0, 1, 2, 0, Dtype::Int32);
  const int32_t vals[2] = {16777217, -2147483647};
  std::memcpy(mc.memory.onChip(Space::Sbuf, 0, 0), vals, 8);
  mc.memory.markWritten(Space::Sbuf, 0, 0, 8);
  mc.run(make(Opcode::NcTranspose, Engine::Vector, sb(0, 2, 1, 64, Dtype::Int32), {src}));
  CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Sbuf, 0, 64, 4)) == 16777217);
  CHECK(static_cast<int32_t>(bitsAt(mc.memory, Space::Sbuf, 1, 64, 4)) == -2147483647);
}
