// Registry entry of matmul_tutorial: variants, their shape rules, program, reference and flops.
#include <fmt/format.h>

#include <string>

#include "isa/error.h"
#include "kernels/matmul/matmul_kernel.h"
#include "kernels/tutorials/tutorial_build.h"
#include "kernels/tutorials/tutorial_kernel.h"

namespace neuronsim::kernels {

namespace {

const char* const kName = "matmul_tutorial";
const std::vector<std::string> kVariants = {"t1_tiled",     "t1_hoisted", "t1_blocked",
                                            "t1_optimized", "t2_tiled",   "t2_hoisted"};
/// loop_buffers when auto: four buffers, the smallest depth at which our tiled kernel keeps the
/// DMA engines as busy as T2's published tiled profile does (99.93%; docs/tutorials.md).
constexpr int64_t kAutoLoopBuffers = 4;
const char* const kBlockParams[3] = {"tiles_in_block_m", "tiles_in_block_n", "tiles_in_block_k"};

/// Tiles per block of `variant`: the tutorial's constants, or for t1_optimized its
/// meta-parameters (defaults 16, 2, 8) when given. Another variant's blocks are fixed: a block
/// parameter given there changes nothing (run warns, docs/kernels.md "--strict").
TutorialBlocks blocksOf(const std::string& variant, const ParamValues& params) {
  if (variant == "t1_blocked") return {2, 2, 1};
  if (variant != "t1_optimized") return {};
  return {params.intOr(kBlockParams[0], 16), params.intOr(kBlockParams[1], 2),
          params.intOr(kBlockParams[2], 8)};
}

void requireMultiple(const std::string& variant, const char* axis, const char* where, int64_t size,
                     int64_t step, const std::string& why) {
  if (size % step != 0)
    throw Error(fmt::format("{}: {} needs {} ({}) a multiple of {} ({}), not {}", kName, variant,
                            axis, where, step, why, size));
}

ShapeMap inferTutorial(const ShapeMap& inputs, const ParamValues& params) {
  const Shape& lhsT = inputs.at("lhsT");
  const Shape& rhs = inputs.at("rhs");
  const std::string prefix = fmt::format("{}: ", kName);
  if (lhsT.size() != 2)
    throw Error(fmt::format("{}lhsT has shape {} but must be [K, M]", prefix, shapeText(lhsT)));
  if (rhs.size() != 2)
    throw Error(fmt::format("{}rhs has shape {} but must be [K, N]", prefix, shapeText(rhs)));
  if (lhsT[0] != rhs[0])
    throw Error(fmt::format("{}lhsT has shape {} and rhs {} but their first axes (K) must be equal",
                            prefix, shapeText(lhsT), shapeText(rhs)));
  const std::string& variant = params.getString("variant");
  const TutorialBlocks blocks = blocksOf(variant, params);
  const bool blocked = variant == "t1_blocked" || variant == "t1_optimized";
  const std::string tiles = blocked ? "tiles per block" : "one tile";
  requireMultiple(variant, "K", "lhsT axis 0", lhsT[0], kTutorialTileK * blocks.k,
                  fmt::format("{} x {}: {}", blocks.k, kTutorialTileK, tiles));
  requireMultiple(variant, "M", "lhsT axis 1", lhsT[1], kTutorialTileM * blocks.m,
                  fmt::format("{} x {}: {}", blocks.m, kTutorialTileM, tiles));
  requireMultiple(variant, "N", "rhs axis 1", rhs[1], kTutorialTileN * blocks.n,
                  fmt::format("{} x {}: {}", blocks.n, kTutorialTileN, tiles));
  return {{"out", {lhsT[1], rhs[1]}}};
}

void buildTutorial(KernelBuilder& b, const KernelArgs& args) {
  const std::string& variant = args.params.getString("variant");
  const HbmView& lhsT = args.in("lhsT");
  const HbmView& rhs = args.in("rhs");
  const HbmView& out = args.out("out");
  const bool t2 = variant.rfind("t2_", 0) == 0;
  const TutorialOptions options{
      blocksOf(variant, args.params), t2 ? isa::Dtype::Fp32 : args.dtype,
      static_cast<int>(args.params.intOr("loop_buffers", kAutoLoopBuffers))};
  if (variant == "t1_tiled" || variant == "t2_tiled")
    buildTutorialTiled(b, lhsT, rhs, out, options);
  if (variant == "t1_hoisted" || variant == "t2_hoisted")
    buildTutorialHoisted(b, lhsT, rhs, out, options);
  if (variant == "t1_blocked") buildTutorialBlockedFree(b, lhsT, rhs, out, options);
  if (variant == "t1_optimized") buildTutorialOptimized(b, lhsT, rhs, out, options);
}

}  // namespace

KernelSpec matmulTutorialSpec() {
  KernelSpec spec;
  spec.name = kName;
  spec.description =
      "the NKI matmul tutorials' kernels stage by stage (docs/tutorials.md); out in the kernel "
      "dtype";
  spec.inputs = {{"lhsT", "left operand, transposed: [K, M]", false},
                 {"rhs", "right operand: [K, N]", false}};
  spec.outputs = {{"out", "product [M, N] in the kernel dtype", false}};
  spec.params = {
      {"variant", ParamType::Enum, "t1_tiled",
       "tutorial stage (T1: matrix multiplication tutorial, T2: kernel optimization)", kVariants},
      scheduleParam(kBlockParams[0], ParamType::Int, "t1_optimized: TILES_IN_BLOCK_M (auto: 16)",
                    {})
          .within(1),
      scheduleParam(kBlockParams[1], ParamType::Int, "t1_optimized: TILES_IN_BLOCK_N (auto: 2)", {})
          .within(1),
      scheduleParam(kBlockParams[2], ParamType::Int, "t1_optimized: TILES_IN_BLOCK_K (auto: 8)", {})
          .within(1),
      scheduleParam("loop_buffers", ParamType::Int,
                    "most buffers per tensor declared in a loop body (our stand-in for the NKI "
                    "compiler's pipelining; auto: 4)",
                    {"1", "2", "3", "4"})
          .within(1, 8),
  };
  // Fits every variant's block rules with their default blocks and runs in about a second.
  spec.defaultShapes = {{"lhsT", {1024, 2048}}, {"rhs", {1024, 1024}}};
  spec.inferShapes = inferTutorial;
  spec.build = buildTutorial;
  const KernelSpec matmul = matmulSpec();  // same product, reference and flops
  spec.reference = matmul.reference;
  spec.flops = matmul.flops;
  return spec;
}

const std::vector<TutorialMeasurement>& tutorialMeasurements() {
  const Shape lhsT = {8192, 4096}, rhs = {8192, 8192};
  const std::string t1 =
      "aws-neuron-sdk nki/tutorials/matrix_multiplication.rst, benchmark table (Trn1, bf16)";
  const std::string t2 =
      "issue 8, from aws-neuron-sdk nki/guides/tutorials/kernel-optimization.rst profiles (Trn2, "
      "fp32 inputs)";
  static const std::vector<TutorialMeasurement> cases = {
      {"t1_tiled", "trn1", isa::Dtype::Bf16, lhsT, rhs, 51.80, t1},
      {"t1_hoisted", "trn1", isa::Dtype::Bf16, lhsT, rhs, 42.96, t1, true},
      {"t1_blocked", "trn1", isa::Dtype::Bf16, lhsT, rhs, 22.07, t1},
      {"t1_optimized", "trn1", isa::Dtype::Bf16, lhsT, rhs, 6.97, t1},
      {"t2_tiled", "trn2", isa::Dtype::Fp32, lhsT, rhs, 39.9, t2},
      {"t2_hoisted", "trn2", isa::Dtype::Fp32, lhsT, rhs, 28.2, t2},
  };
  return cases;
}

}  // namespace neuronsim::kernels
