// conv3d_bwd dw with depth pairs (DwRowsPlan::depthPairs): the planner's choice and odd shapes
// against the reference (interpreter == timed bit for bit, no races).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "sim/machine_config.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;
using Params = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("conv3d_bwd plan: dw pairs depths where C_in is too wide for depth packing") {
  const ConvCase big{{1, 64, 16, 64, 64}, {3, 3, 3, 64, 64}, 0, {{"padding", "1"}}, Dtype::Bf16};
  const DwRowsPlan p = testing::dwRowsPlanOf(big);
  CHECK(p.depthPairs);
  CHECK(p.depthGroup == 2);
  CHECK(p.depthSlots == 2);
  CHECK(p.accGroups == 3);
  CHECK_FALSE(p.dyStationary);
  ConvCase off = big;
  off.params.emplace_back("dw_depth_pairs", "off");
  CHECK_FALSE(testing::dwRowsPlanOf(off).depthPairs);
  CHECK(testing::dwRowsPlanOf(off).depthGroup == 1);
  // auto needs kMinDepthPairsSaving matmul cycles on paper: C 40 4x8x8 saves 2304, 8x16x16 5760
  const ConvCase tiny{{1, 40, 4, 8, 8}, {3, 3, 3, 40, 40}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(tiny).depthPairs);
  const ConvCase small{{1, 40, 8, 16, 16}, {3, 3, 3, 40, 40}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(testing::dwRowsPlanOf(small).depthPairs);
  // C 32 packs 4 slots: pairs do not apply, even when asked for
  ConvCase c32{{1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(testing::dwRowsPlanOf(c32).depthSlots == 4);
  CHECK_FALSE(testing::dwRowsPlanOf(c32).depthPairs);
  c32.params.emplace_back("dw_depth_pairs", "on");
  CHECK(testing::dwRowsPlanOf(c32).depthSlots == 4);
  CHECK_FALSE(testing::dwRowsPlanOf(c32).depthPairs);
  // Kd 2, C_in over half the PE columns, or 1 dy depth: not applicable
  const ConvCase kd2{{1, 64, 8, 16, 16}, {2, 3, 3, 64, 64}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(kd2).depthPairs);
  const ConvCase wide{{1, 96, 8, 16, 16}, {3, 3, 3, 96, 64}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(wide).depthPairs);
  const ConvCase flat{{1, 64, 3, 16, 16}, {3, 3, 3, 64, 64}, 0, {{"dw_depth_pairs", "on"}}};
  CHECK_FALSE(testing::dwRowsPlanOf(flat).depthPairs);
}

TEST_CASE("conv3d_bwd dw depth pairs: odd shapes against the reference") {
  const std::vector<ConvCase> cases = {
      // C 64, bf16, odd D (the last dy depth alone), with dx and db
      {{1, 64, 5, 6, 8}, {3, 3, 3, 64, 64}, 0, {{"padding", "1"}}, Dtype::Bf16},
      // C_in 33, C_out 40, fp32, B 2, dw only
      {{2, 33, 4, 5, 7}, {3, 3, 3, 33, 40}, 0, {{"padding", "1"}, {"compute_dx", "false"}}},
      // C_in 40, C_out 24, asymmetric padding (an edge reads padding at one end only), bf16
      {{1, 40, 6, 7, 5},
       {3, 3, 3, 40, 24},
       0,
       {{"padding", "1,0,1,1,0,1"}, {"compute_dx", "false"}},
       Dtype::Bf16},
      // C 48, no padding: dy has 3 depths, every edge reads x
      {{1, 48, 5, 6, 6}, {3, 3, 3, 48, 48}, 0, {{"compute_dx", "false"}}},
      // C_in 64, C_out 100 (3 x 100 columns in a bank), H stride 2, bf16
      {{1, 64, 4, 9, 6},
       {3, 3, 3, 64, 100},
       0,
       {{"padding", "1"}, {"stride", "1,2,1"}, {"compute_dx", "false"}},
       Dtype::Bf16},
      // 2 dy depths only, no D padding, C 36
      {{1, 36, 4, 5, 5}, {3, 3, 3, 36, 36}, 0, {{"padding", "0,0,1,1,1,1"}}, Dtype::Bf16},
      // dy by DMA transposes: no shared kh rows (per-shift xT), C 56, fp32
      {{1, 56, 5, 12, 12},
       {3, 3, 3, 56, 56},
       0,
       {{"padding", "1"}, {"dy_transpose", "dma"}, {"compute_dx", "false"}}},
      // xT row reuse, x groups off, C 44 -> 20, fp32
      {{1, 44, 4, 6, 7},
       {3, 3, 3, 44, 20},
       0,
       {{"padding", "1"}, {"dw_row_reuse", "on"}, {"dw_x_groups", "off"}}},
  };
  for (ConvCase c : cases) {
    c.params.emplace_back("dw_depth_pairs", "on");
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    CHECK(testing::dwRowsPlanOf(c).depthPairs);
    testing::checkConvCase(conv3dBwdSpec(), c);
  }
}

TEST_CASE("conv3d_bwd dw depth pairs: trn1 and 64 partitions") {
  ConvCase c{{1, 40, 5, 6, 7}, {3, 3, 3, 40, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  c.params.emplace_back("dw_depth_pairs", "on");
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(testing::dwRowsPlanOf(c, trn1).depthPairs);
  testing::checkConvCase(conv3dBwdSpec(), c, trn1);
  // 64 partitions: C_in 24 lies in (16, 32]
  ConvCase half{{1, 24, 5, 6, 5}, {3, 3, 3, 24, 24}, 0, {{"padding", "1"}}};
  half.params.emplace_back("dw_depth_pairs", "on");
  CHECK(testing::dwRowsPlanOf(half, testing::trn2Half()).depthPairs);
  testing::checkConvCase(conv3dBwdSpec(), half, testing::trn2Half());
}

}  // namespace
}  // namespace neuronsim::kernels
