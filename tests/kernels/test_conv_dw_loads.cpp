// conv3d_bwd dw's loads: dw_border_engine (DwRowsPlan::borderEngine) and dw_dy_loads
// (DwRowsPlan::dyBandsMerged): the planner's choices, what the built program does, and odd shapes
// against the reference.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/harness/run_kernel.h"
#include "sim/machine_config.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using isa::Engine;
using testing::ConvCase;

const sim::MachineConfig& trn1() {
  static const sim::MachineConfig machine = sim::loadMachine("trn1");
  return machine;
}

ShapeMap shapesOf(const KernelSpec& spec, const ConvCase& c, const ParamValues& params) {
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  for (const auto& [name, shape] : spec.deriveShapes(shapes, params)) shapes.emplace(name, shape);
  return shapes;
}

isa::Program programOf(const ConvCase& c) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  return buildKernel(spec, params, checkShapes(spec, shapesOf(spec, c, params), params), c.dtype,
                     testing::trn2().geometry);
}

/// The engines running the memsets of dw's loads (the x window borders) in the built program.
std::set<Engine> borderEnginesOf(const ConvCase& c) {
  const isa::Program program = programOf(c);
  std::set<Engine> engines;
  for (const isa::Instruction& inst : program.instructions)
    if (inst.note == "dw load" && inst.opcode == isa::Opcode::Memset) engines.insert(inst.engine);
  return engines;
}

/// dw's load DMAs reading dy in the built program.
int64_t dyLoadsOf(const ConvCase& c) {
  const isa::Program program = programOf(c);
  const int32_t dy = program.tensorIndex("dy");
  int64_t n = 0;
  for (const isa::Instruction& inst : program.instructions)
    n += inst.note == "dw load" && inst.opcode == isa::Opcode::DmaCopy && inst.srcs[0].tensor == dy;
  return n;
}

ConvCase with(ConvCase c, const std::string& engine, const std::string& knob = "dw_border_engine") {
  c.params.emplace_back(knob, engine);
  return c;
}

TEST_CASE("conv3d_bwd plan: dw borders on VectorE with shared kh taps in bf16 on trn2") {
  const ConvCase c16{{1, 16, 8, 32, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  REQUIRE(testing::dwRowsPlanOf(c16).shareKh);
  CHECK(testing::dwRowsPlanOf(c16).borderEngine == Engine::Vector);
  // fp32, and trn1 (no VectorE performance mode): GpSimd
  ConvCase fp32 = c16;
  fp32.dtype = Dtype::Fp32;
  CHECK(testing::dwRowsPlanOf(fp32).borderEngine == Engine::GpSimd);
  CHECK(testing::dwRowsPlanOf(c16, trn1()).borderEngine == Engine::GpSimd);
  // C 256 packs no depths, so shares no kh taps: GpSimd
  const ConvCase c256{{1, 256, 4, 8, 8}, {3, 3, 3, 256, 256}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(c256).shareKh);
  CHECK(testing::dwRowsPlanOf(c256).borderEngine == Engine::GpSimd);
  // forced either way, wherever dw runs by rows
  CHECK(testing::dwRowsPlanOf(with(c16, "gpsimd")).borderEngine == Engine::GpSimd);
  CHECK(testing::dwRowsPlanOf(with(fp32, "vector")).borderEngine == Engine::Vector);
  CHECK(testing::dwRowsPlanOf(with(c256, "vector")).borderEngine == Engine::Vector);
}

TEST_CASE("conv3d_bwd dw_border_engine: the program zeroes dw's borders on the chosen engine") {
  const ConvCase c{{1, 16, 6, 16, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(borderEnginesOf(c) == std::set<Engine>{Engine::Vector});
  CHECK(borderEnginesOf(with(c, "gpsimd")) == std::set<Engine>{Engine::GpSimd});
  ConvCase unpacked{{1, 8, 4, 6, 7}, {3, 3, 3, 8, 8}, 0, {{"padding", "1"}}, Dtype::Bf16};
  unpacked.params.emplace_back("dw_depth_group", "1");
  unpacked.params.emplace_back("dw_stationary", "x");
  CHECK(borderEnginesOf(with(unpacked, "vector")) == std::set<Engine>{Engine::Vector});
}

TEST_CASE("conv3d_bwd dw_border_engine: odd shapes against the reference") {
  const std::vector<ConvCase> cases = {
      // shared kh taps, bf16: VectorE (auto); C_in 12 leaves group partitions unloaded
      {{1, 12, 5, 11, 13}, {3, 3, 3, 12, 20}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{1, 32, 7, 9, 16}, {3, 3, 3, 32, 32}, 0, {{"padding", "1,0,2"}}, Dtype::Bf16},
      // forced: fp32 with asymmetric padding and stride, unpacked rows
      {{1, 8, 6, 10, 9},
       {3, 3, 3, 8, 8},
       0,
       {{"padding", "1,2,0,1,1,0"}, {"stride", "1,2,1"}, {"dw_border_engine", "vector"}}},
      {{2, 5, 4, 7, 6},
       {2, 3, 3, 5, 6},
       0,
       {{"padding", "1"}, {"dw_depth_group", "1"}, {"dw_border_engine", "vector"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    testing::checkConvCase(conv3dBwdSpec(), c);
  }
}

TEST_CASE("conv3d_bwd plan: grouped dy loads merge their bands where the DMA stays small") {
  // 4 bands of 8 rows (W 32), 4 groups of 2 depths: 16 x 4 x 2 x 8 x 32 x 2 B = 32 KiB a DMA
  const ConvCase small{{1, 16, 8, 32, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  REQUIRE(testing::dwRowsPlanOf(small).dyGroups == 4);
  CHECK(testing::dwRowsPlanOf(small).boxH == 4);
  CHECK(testing::dwRowsPlanOf(small).dyBandsMerged);
  CHECK_FALSE(testing::dwRowsPlanOf(with(small, "bands", "dw_dy_loads")).dyBandsMerged);
  // issue 10's C 32 16x64x64 (chunks of 6 rows: 192 KiB merged) and C 64 keep a DMA per band
  const ConvCase c32{{1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(testing::dwRowsPlanOf(c32).dyGroups == 4);
  CHECK_FALSE(testing::dwRowsPlanOf(c32).dyBandsMerged);
  const ConvCase c64{{1, 64, 16, 64, 64}, {3, 3, 3, 64, 64}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(c64).dyBandsMerged);
  CHECK(testing::dwRowsPlanOf(with(c64, "merged", "dw_dy_loads")).dyBandsMerged);
  // bands of unequal rows (H 30 in 4 bands of 8): per band, forced or not
  const ConvCase uneven{{1, 16, 8, 30, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(with(uneven, "merged", "dw_dy_loads")).dyBandsMerged);
}

TEST_CASE("conv3d_bwd dw_dy_loads: the program loads dy once per group, not per band") {
  ConvCase c{{1, 16, 8, 32, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  c.params.emplace_back("compute_dx", "false");
  const int64_t merged = dyLoadsOf(c);
  CHECK(merged > 0);
  CHECK(dyLoadsOf(with(c, "bands", "dw_dy_loads")) == 4 * merged);  // 4 bands
}

TEST_CASE("conv3d_bwd dw_dy_loads: odd shapes against the reference") {
  const std::vector<ConvCase> cases = {
      // merged (auto): 4 bands of 8 rows, C_out 12 (group partitions past it unloaded), B 2
      {{2, 10, 5, 32, 32}, {3, 3, 3, 10, 12}, 0, {{"padding", "1"}}, Dtype::Bf16},
      // merged (forced): 2 bands of 5 rows, asymmetric depth padding, fp32, several chunks
      {{1, 8, 9, 10, 40},
       {3, 3, 3, 8, 16},
       0,
       {{"padding", "2,0,1,1,1,1"}, {"dw_dy_loads", "merged"}, {"compute_dx", "false"}}},
      // bands (forced) where auto merges
      {{1, 16, 6, 16, 32},
       {3, 3, 3, 16, 16},
       0,
       {{"padding", "1"}, {"dw_dy_loads", "bands"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    testing::checkConvCase(conv3dBwdSpec(), c);
  }
}

}  // namespace
}  // namespace neuronsim::kernels
