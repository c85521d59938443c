// DMA semantics: dma_copy between every pair of spaces with casts, HBM views, dma_transpose.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

std::vector<TensorDecl> tensors() {
  return {{"a", {2, 3}, Dtype::Fp32, TensorKind::Input},
          {"b", {3, 2}, Dtype::Bf16, TensorKind::Output},
          {"c", {8}, Dtype::Fp16, TensorKind::Internal}};
}

Instruction dma(Opcode op, AccessPattern dst, AccessPattern src) {
  Instruction inst = make(op, Engine::Sync, std::move(dst), {std::move(src)});
  inst.dmaQueue = 0;
  return inst;
}

}  // namespace

TEST_CASE("dma_copy hbm -> sbuf through a column view, with a cast") {
  Machine mc(tensors());
  mc.memory.setTensor(0, {1, 2, 3, 4, 5, 6.00390625f});
  // 3 rows of 2: element (p, i) = a[p + 3*i], i.e. a transposed.
  const AccessPattern view = hbmView(0, 3, 1, 0, {{3, 2}});
  mc.run(dma(Opcode::DmaCopy, sb(0, 3, 2, 0, Dtype::Bf16), view));
  CHECK(get(mc.memory, sb(0, 3, 2, 0, Dtype::Bf16)) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(mc.memory.isWritten(Space::Sbuf, 2, 0, 4));
  CHECK(mc.memory.uninitializedReads().empty());
}

TEST_CASE("dma_copy sbuf -> hbm, hbm -> hbm, sbuf -> sbuf, sbuf <-> psum") {
  Machine mc(tensors());
  put(mc.memory, sb(0, 2, 3, 0), {1, 2, 3, 4, 5, 1.00390625f});
  SUBCASE("sbuf -> hbm with a cast to bf16") {
    mc.run(dma(Opcode::DmaCopy, hbmView(1, 2, 3, 0, {{1, 3}}, Dtype::Bf16), sb(0, 2, 3, 0)));
    CHECK(mc.memory.getTensor(1) == std::vector<float>{1, 2, 3, 4, 5, 1});
  }
  SUBCASE("hbm -> hbm with an offset and a cast to fp16") {
    mc.memory.setTensor(0, {1, 2, 3, 4, 5, 65520});
    mc.run(dma(Opcode::DmaCopy, hbmView(2, 1, 0, 2, {{1, 6}}, Dtype::Fp16),
               hbmView(0, 1, 0, 0, {{1, 6}})));
    CHECK(mc.memory.getTensor(2) == std::vector<float>{0, 0, 1, 2, 3, 4, 5, INFINITY});
  }
  SUBCASE("sbuf -> sbuf across partitions") {
    mc.run(dma(Opcode::DmaCopy, sb(64, 2, 3, 100 * 4), sb(0, 2, 3, 0)));
    CHECK(get(mc.memory, sb(64, 2, 3, 400)) == std::vector<float>{1, 2, 3, 4, 5, 1.00390625f});
    CHECK_FALSE(mc.memory.isWritten(Space::Sbuf, 66, 400, 4));
  }
  SUBCASE("sbuf -> psum -> sbuf, reshaped [2,3] -> [3,2] -> [1,6]") {
    mc.run(dma(Opcode::DmaCopy, ps(0, 3, 2, 0), sb(0, 2, 3, 0)));
    CHECK(get(mc.memory, ps(0, 3, 2, 0)) == std::vector<float>{1, 2, 3, 4, 5, 1.00390625f});
    mc.run(dma(Opcode::DmaCopy, sb(5, 1, 6, 0, Dtype::Fp16), ps(0, 3, 2, 0)));
    CHECK(get(mc.memory, sb(5, 1, 6, 0, Dtype::Fp16)) ==
          std::vector<float>{1, 2, 3, 4, 5, 1.00390625f});
  }
  SUBCASE("hbm -> psum -> psum -> hbm, the last with a cast to bf16") {
    mc.memory.setTensor(0, {1, 2, 3, 4, 5, 1.00390625f});
    mc.run(dma(Opcode::DmaCopy, ps(0, 2, 3, 0), hbmView(0, 2, 3, 0, {{1, 3}})));
    mc.run(dma(Opcode::DmaCopy, ps(64, 1, 6, 512), ps(0, 2, 3, 0)));
    mc.run(dma(Opcode::DmaCopy, hbmView(1, 1, 0, 0, {{1, 6}}, Dtype::Bf16), ps(64, 1, 6, 512)));
    CHECK(mc.memory.getTensor(1) == std::vector<float>{1, 2, 3, 4, 5, 1});
  }
  CHECK(mc.memory.uninitializedReads().empty());
}

TEST_CASE("dma_copy rejects unequal element counts and out-of-bounds views") {
  Machine mc(tensors());
  put(mc.memory, sb(0, 2, 3, 0), {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(mc.run(dma(Opcode::DmaCopy, sb(0, 1, 5, 64), sb(0, 2, 3, 0))), neuronsim::Error);
  CHECK_THROWS_AS(mc.run(dma(Opcode::DmaCopy, hbmView(0, 2, 3, 1, {{1, 3}}), sb(0, 2, 3, 0))),
                  neuronsim::Error);
  CHECK_THROWS_AS(mc.run(dma(Opcode::DmaCopy, sb(0, 2, 3, 4090), hbmView(0, 2, 3, 0, {{1, 3}}))),
                  neuronsim::Error);
  CHECK_FALSE(mc.memory.isWritten(Space::Sbuf, 0, 64, 4));  // nothing written by a rejected copy
}

TEST_CASE("dma_transpose: [A parts, B free] -> [B parts, A free]") {
  Machine mc(tensors());
  SUBCASE("sbuf bf16 -> sbuf bf16") {
    put(mc.memory, sb(0, 2, 3, 0, Dtype::Bf16), {1, 2, 3, 4, 5, 6});
    mc.run(dma(Opcode::DmaTranspose, sb(32, 3, 2, 64, Dtype::Bf16), sb(0, 2, 3, 0, Dtype::Bf16)));
    CHECK(get(mc.memory, sb(32, 3, 2, 64, Dtype::Bf16)) == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
  SUBCASE("hbm fp32 -> sbuf fp32") {
    mc.memory.setTensor(0, {1, 2, 3, 4, 5, 6});
    mc.run(dma(Opcode::DmaTranspose, sb(0, 3, 2, 0), hbmView(0, 2, 3, 0, {{1, 3}})));
    CHECK(get(mc.memory, sb(0, 3, 2, 0)) == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
}

TEST_CASE("an execution error names the instruction index, opcode and the rule") {
  Machine mc(tensors());
  put(mc.memory, sb(0, 2, 3, 0), {1, 2, 3, 4, 5, 6});
  try {
    mc.run(dma(Opcode::DmaCopy, sb(0, 1, 5, 64), sb(0, 2, 3, 0)), 4);
    FAIL("no error");
  } catch (const neuronsim::Error& e) {
    CHECK(std::string(e.what()) ==
          "instruction 4 (dma_copy): dst element count is 5 but must be 6");
  }
}
