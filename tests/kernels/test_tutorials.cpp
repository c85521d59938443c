// matmul_tutorial: every NKI tutorial stage against the matmul reference, shape rules, loop
// structure.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "isa/error.h"
#include "kernel_check.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/schedule_effect.h"
#include "kernels/tutorials/tutorial_kernel.h"
#include "test_builder_oracle.h"

using neuronsim::isa::Dtype;
using neuronsim::isa::Opcode;
using neuronsim::kernels::testing::checkKernelCase;
using neuronsim::kernels::testing::KernelCase;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

KernelCase tutorialCase(const std::string& variant, int64_t k, int64_t m, int64_t n, Dtype dtype,
                        uint64_t seed, Params extra = {}) {
  extra.emplace_back("variant", variant);
  return KernelCase{"matmul_tutorial", {{"lhsT", {k, m}}, {"rhs", {k, n}}}, extra, dtype, seed};
}

/// The program `variant` builds for lhsT [k, m], rhs [k, n].
neuronsim::isa::Program tutorialProgram(const std::string& variant, int64_t k, int64_t m, int64_t n,
                                        Params extra = {}, Dtype dtype = Dtype::Bf16) {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  extra.emplace_back("variant", variant);
  const ParamValues params = parseParams(spec, extra);
  const KernelShapes shapes = checkShapes(spec, {{"lhsT", {k, m}}, {"rhs", {k, n}}}, params);
  return buildKernel(spec, params, shapes, dtype, neuronsim::isa::Geometry{});
}

/// Opcode counts of the program `variant` builds for lhsT [k, m], rhs [k, n].
std::map<Opcode, int64_t> opcodeCounts(const std::string& variant, int64_t k, int64_t m, int64_t n,
                                       Params extra = {}, Dtype dtype = Dtype::Bf16) {
  std::map<Opcode, int64_t> counts;
  for (const auto& inst : tutorialProgram(variant, k, m, n, std::move(extra), dtype).instructions)
    ++counts[inst.opcode];
  return counts;
}

void checkShapeError(const std::string& variant, int64_t k, int64_t m, int64_t n,
                     const std::string& message, Params extra = {}) {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  extra.emplace_back("variant", variant);
  CHECK_THROWS_WITH_AS(
      checkShapes(spec, {{"lhsT", {k, m}}, {"rhs", {k, n}}}, parseParams(spec, extra)),
      message.c_str(), neuronsim::Error);
}

}  // namespace

TEST_CASE("matmul_tutorial: tiled and hoisted variants on tile-multiple shapes") {
  struct Shape3 {
    int64_t k, m, n;
  };
  const Shape3 shapes[] = {{128, 128, 512}, {384, 256, 1024}, {256, 384, 1536}};
  uint64_t seed = 1;
  for (const char* variant : {"t1_tiled", "t1_hoisted", "t2_tiled", "t2_hoisted"})
    for (const Shape3& s : shapes)
      for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
        CAPTURE(variant);
        checkKernelCase(tutorialCase(variant, s.k, s.m, s.n, dtype, seed++));
      }
}

TEST_CASE("matmul_tutorial: single and deeper loop buffering give the same product") {
  uint64_t seed = 30;
  for (const char* variant : {"t1_tiled", "t2_hoisted", "t1_blocked"})
    for (const char* buffers : {"1", "4"}) {
      CAPTURE(variant);
      CAPTURE(buffers);
      checkKernelCase(
          tutorialCase(variant, 384, 512, 2048, Dtype::Bf16, seed++, {{"loop_buffers", buffers}}));
    }
  checkKernelCase(
      tutorialCase("t1_optimized", 512, 512, 1024, Dtype::Fp32, seed++,
                   {{"loop_buffers", "3"}, {"tiles_in_block_m", "2"}, {"tiles_in_block_k", "2"}}));
}

TEST_CASE("matmul_tutorial: t1_blocked on block-multiple shapes") {
  uint64_t seed = 50;
  for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
    checkKernelCase(tutorialCase("t1_blocked", 128, 256, 1024, dtype, seed++));
    checkKernelCase(tutorialCase("t1_blocked", 384, 512, 2048, dtype, seed++));
    checkKernelCase(tutorialCase("t1_blocked", 640, 768, 1024, dtype, seed++));
  }
}

TEST_CASE("matmul_tutorial: t1_optimized with small and default blocks") {
  // Blocks of 2 x 1 x 2 tiles let several M, N and K blocks (SBUF accumulation) run on small
  // shapes.
  const Params small = {
      {"tiles_in_block_m", "2"}, {"tiles_in_block_n", "1"}, {"tiles_in_block_k", "2"}};
  uint64_t seed = 70;
  for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
    checkKernelCase(tutorialCase("t1_optimized", 256, 256, 512, dtype, seed++, small));
    checkKernelCase(tutorialCase("t1_optimized", 768, 768, 1536, dtype, seed++, small));
    checkKernelCase(tutorialCase(
        "t1_optimized", 384, 384, 1024, dtype, seed++,
        {{"tiles_in_block_m", "3"}, {"tiles_in_block_n", "2"}, {"tiles_in_block_k", "1"}}));
  }
  checkKernelCase(tutorialCase("t1_optimized", 1024, 2048, 1024, Dtype::Bf16, seed++));
}

TEST_CASE("matmul_tutorial: the default shape builds every variant within trn1's SBUF") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  const auto trn1 = neuronsim::sim::loadMachine("trn1");
  for (const std::string& variant : spec.params[0].choices) {
    CAPTURE(variant);
    const ParamValues params = parseParams(spec, {{"variant", variant}});
    const KernelShapes shapes = checkShapes(spec, spec.defaultShapes, params);
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
      CHECK_NOTHROW(buildKernel(spec, params, shapes, dtype, trn1.geometry));
  }
}

TEST_CASE("matmul_tutorial: loads, matmuls and stores follow each stage's loop structure") {
  // K = 1024 (8 tiles), M = 512 (4 tiles), N = 2048 (4 tiles): 128 matmuls in every variant.
  const auto tiled = opcodeCounts("t1_tiled", 1024, 512, 2048);
  CHECK(tiled.at(Opcode::NcMatmul) == 128);
  CHECK(tiled.at(Opcode::DmaCopy) ==
        2 * 128 + 16);  // two loads per matmul, one store per output tile
  const auto hoisted = opcodeCounts("t1_hoisted", 1024, 512, 2048);
  CHECK(hoisted.at(Opcode::NcMatmul) == 128);
  CHECK(hoisted.at(Opcode::DmaCopy) ==
        4 * 8 + 4 * 4 * 8 + 16);  // lhsT column per m, rhs column per (m, n)
  const auto blocked = opcodeCounts("t1_blocked", 1024, 512, 2048);
  CHECK(blocked.at(Opcode::NcMatmul) == 128);
  CHECK(blocked.at(Opcode::DmaCopy) ==
        4 * 8 + 2 * 4 * 8 + 16);  // rhs columns loaded once per 2-tile M block
  const auto optimized = opcodeCounts(
      "t1_optimized", 1024, 512, 2048,
      {{"tiles_in_block_m", "2"}, {"tiles_in_block_n", "2"}, {"tiles_in_block_k", "4"}});
  CHECK(optimized.at(Opcode::NcMatmul) == 128);
  // Per N block (2) and K block (2): 4 rhs loads and 2 M blocks x 4 lhsT loads; per N block 4
  // packed stores.
  CHECK(optimized.at(Opcode::DmaCopy) == 2 * 2 * (4 + 2 * 4) + 2 * 4);
  CHECK(optimized.at(Opcode::TensorTensor) ==
        2 * 2 * 2 * 2 * 2);  // one SBUF accumulation per output tile and K block
  CHECK(optimized.at(Opcode::Memset) == 2 * 2 * 2 * 2);
}

TEST_CASE("matmul_tutorial: t2_tiled is the kernel-optimization tutorial's tiled program") {
  // aws-neuron-sdk nki/guides/tutorials/kernel-optimization.rst, "Writing the kernel": for m, for
  // n: a PSUM tile; for k: dma_copy the lhsT tile (k, m), dma_copy the rhs tile (k, n), nc_matmul
  // accumulating into the PSUM tile; then tensor_copy into an fp32 SBUF tile and dma_copy it to
  // out (m, n). lhsT arrives transposed: no TensorE transpose, nothing hoisted.
  using neuronsim::isa::Space;
  const int64_t K = 384, M = 256, N = 1024;
  for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
    const std::string dtypeName(neuronsim::isa::dtypeName(dtype));
    CAPTURE(dtypeName);
    const auto insts = tutorialProgram("t2_tiled", K, M, N, {}, dtype).instructions;
    size_t i = 0;
    auto next = [&](Opcode opcode) -> const neuronsim::isa::Instruction& {
      REQUIRE(i < insts.size());
      CHECK(insts[i].opcode == opcode);
      return insts[i++];
    };
    for (int64_t m = 0; m < M / 128; ++m)
      for (int64_t n = 0; n < N / 512; ++n) {
        CAPTURE(m);
        CAPTURE(n);
        const neuronsim::isa::AccessPattern* psum = nullptr;
        for (int64_t k = 0; k < K / 128; ++k) {
          CAPTURE(k);
          const auto& lhs = next(Opcode::DmaCopy);
          CHECK(lhs.srcs.at(0).offset == k * 128 * M + m * 128);
          CHECK(lhs.dst.numElements() == 128 * 128);
          const auto& rhs = next(Opcode::DmaCopy);
          CHECK(rhs.srcs.at(0).offset == k * 128 * N + n * 512);
          CHECK(rhs.dst.numElements() == 128 * 512);
          const auto& mm = next(Opcode::NcMatmul);
          CHECK(mm.accumulate == (k > 0));
          REQUIRE(mm.srcs.size() == 2);
          CHECK(mm.srcs[0] == lhs.dst);
          CHECK(mm.srcs[1] == rhs.dst);
          if (psum) CHECK(mm.dst == *psum);
          psum = &mm.dst;
        }
        const auto& copy = next(Opcode::TensorCopy);
        CHECK(copy.srcs.at(0) == *psum);
        CHECK(copy.dst.space == Space::Sbuf);
        CHECK(copy.dst.dtype == Dtype::Fp32);
        const auto& store = next(Opcode::DmaCopy);
        CHECK(store.dst.space == Space::Hbm);
        CHECK(store.dst.offset == m * 128 * N + n * 512);
        CHECK(store.srcs.at(0) == copy.dst);
      }
    CHECK(i == insts.size());
  }
}

TEST_CASE("matmul_tutorial: the program orders every conflicting access pair") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  for (const std::string& variant : spec.params[0].choices) {
    CAPTURE(variant);
    Params given = {{"variant", variant}};
    if (variant == "t1_optimized")
      given = {{"variant", variant}, {"tiles_in_block_m", "2"}, {"tiles_in_block_k", "1"}};
    const ParamValues params = parseParams(spec, given);
    const KernelShapes shapes =
        checkShapes(spec, {{"lhsT", {256, 512}}, {"rhs", {256, 2048}}}, params);
    CHECK(testing::unorderedConflicts(
              buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{}))
              .empty());
  }
}

TEST_CASE("matmul_tutorial: shapes a variant cannot take are errors naming the rule") {
  checkShapeError("t1_tiled", 130, 128, 512,
                  "matmul_tutorial: t1_tiled needs K (lhsT axis 0) a multiple of 128 (1 x 128: one "
                  "tile), not 130");
  checkShapeError("t2_hoisted", 128, 200, 512,
                  "matmul_tutorial: t2_hoisted needs M (lhsT axis 1) a multiple of 128 (1 x 128: "
                  "one tile), not 200");
  checkShapeError("t2_tiled", 128, 128, 500,
                  "matmul_tutorial: t2_tiled needs N (rhs axis 1) a multiple of 512 (1 x 512: one "
                  "tile), not 500");
  checkShapeError("t1_blocked", 128, 128, 1024,
                  "matmul_tutorial: t1_blocked needs M (lhsT axis 1) a multiple of 256 (2 x 128: "
                  "tiles per block), not 128");
  checkShapeError("t1_blocked", 128, 256, 512,
                  "matmul_tutorial: t1_blocked needs N (rhs axis 1) a multiple of 1024 (2 x 512: "
                  "tiles per block), not 512");
  checkShapeError("t1_optimized", 512, 2048, 1024,
                  "matmul_tutorial: t1_optimized needs K (lhsT axis 0) a multiple of 1024 (8 x "
                  "128: tiles per block), not 512");
  checkShapeError("t1_optimized", 1024, 1024, 1024,
                  "matmul_tutorial: t1_optimized needs M (lhsT axis 1) a multiple of 2048 (16 x "
                  "128: tiles per block), not 1024");
  checkShapeError("t2_tiled", 128, 128, 512, "matmul_tutorial: loop_buffers 0 is not in 1..8",
                  {{"loop_buffers", "0"}});
  checkShapeError("t1_optimized", 128, 128, 512, "matmul_tutorial: tiles_in_block_k 0 is below 1",
                  {{"tiles_in_block_k", "0"}});
  // Meaningless on every variant, not only the one that reads it.
  checkShapeError("t1_tiled", 128, 128, 512, "matmul_tutorial: tiles_in_block_m 0 is below 1",
                  {{"tiles_in_block_m", "0"}});
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  CHECK_THROWS_WITH_AS(
      checkShapes(spec, {{"lhsT", {128, 128}}, {"rhs", {256, 512}}}, parseParams(spec, {})),
      "matmul_tutorial: lhsT has shape [128,128] and rhs [256,512] but their first axes (K) must "
      "be equal",
      neuronsim::Error);
}

TEST_CASE("matmul_tutorial: a block parameter on a variant with fixed blocks changes nothing") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  for (const char* variant : {"t1_tiled", "t1_hoisted", "t1_blocked", "t2_tiled", "t2_hoisted"}) {
    CAPTURE(variant);
    const std::vector<std::pair<std::string, std::string>> texts = {{"variant", variant},
                                                                    {"tiles_in_block_m", "4"}};
    const ParamValues params = parseParams(spec, texts);
    const KernelShapes shapes =
        checkShapes(spec, {{"lhsT", {256, 256}}, {"rhs", {256, 1024}}}, params);
    const neuronsim::isa::Program program =
        buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{});
    const auto found = ineffectiveScheduleParams(spec, texts, shapes, Dtype::Bf16,
                                                 neuronsim::isa::Geometry{}, program, true);
    REQUIRE(found.size() == 1);
    CHECK(found[0].name == "tiles_in_block_m");
  }
}

TEST_CASE("matmul_tutorial: an optimized M too large for SBUF is a build error naming the tile") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  const ParamValues params = parseParams(spec, {{"variant", "t1_optimized"}});
  const KernelShapes shapes =
      checkShapes(spec, {{"lhsT", {1024, 16384}}, {"rhs", {1024, 1024}}}, params);
  CHECK_THROWS_WITH_AS(buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{}),
                       doctest::Contains("result_tiles"), neuronsim::Error);
}

TEST_CASE(
    "matmul_tutorial: published cases name registered variants and their shapes pass the rules") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul_tutorial");
  CHECK(tutorialMeasurements().size() == spec.params[0].choices.size());
  for (const TutorialMeasurement& c : tutorialMeasurements()) {
    CAPTURE(c.variant);
    CHECK_NOTHROW(checkShapes(spec, {{"lhsT", c.lhsT}, {"rhs", c.rhs}},
                              parseParams(spec, {{"variant", c.variant}})));
  }
}
