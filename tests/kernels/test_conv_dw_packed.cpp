// conv3d_bwd dw with depth packing (DwRowsPlan::depthGroup > 1): the planner's choice and the
// forced path on odd shapes against the reference (interpreter == timed bit for bit, no races).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "isa/error.h"
#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;
using Params = std::vector<std::pair<std::string, std::string>>;

ConvBwdPlan planOf(const Shape& x, const Shape& filters, const Params& given,
                   Dtype dtype = Dtype::Bf16) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, given);
  const ConvCore core = conv3dBwdCore({{"x_in", x}, {"filters", filters}}, params, false);
  return planConvBwd(core, dtype, testing::trn2().geometry, bwdOptions(params));
}

/// `c` with dw only and the depth group forced, planned packed (sharing kh rows or not), against
/// the reference.
void checkPacked(ConvCase c, int64_t group, bool shareKh) {
  c.params.emplace_back("dw_depth_group", std::to_string(group));
  c.params.emplace_back("compute_dx", "false");
  const ConvBwdPlan p = planOf(c.x, c.filters, c.params, c.dtype);
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.depthGroup == group);
  CHECK(p.rows.depthSlots == group + c.filters[0] - 1);
  CHECK(p.rows.shareKh == shareKh);
  testing::checkConvCase(conv3dBwdSpec(), c);
}

TEST_CASE("conv3d_bwd plan: dw packs dy depths where it takes fewer PE cycles") {
  const Params pad{{"padding", "1"}};
  // issue 10's small-channel shape: 4 x 32 stationary columns, 2 x 32 moving
  // (row pairs off: they take a third accumulator bank, test_conv_dw_row_pairs.cpp)
  const ConvBwdPlan small =
      planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, {{"padding", "1"}, {"dw_row_pairs", "off"}});
  REQUIRE(small.dwMethod == DwMethod::Rows);
  CHECK(small.rows.depthGroup == 2);
  CHECK(small.rows.depthSlots == 4);
  CHECK_FALSE(small.rows.dyStationary);
  CHECK(small.rows.passes.size() == 1);
  // boxes of two row groups share each kw shift's x rows among the kh taps; the 9 [128, 64]
  // accumulators take 2 PSUM banks (16 slots), the transposes ring through the other 6; db is
  // summed from the grouped dy tiles on GpSimd (no PSUM)
  CHECK(small.rows.shareKh);
  CHECK(small.rows.boxH == 2);
  CHECK(small.rows.xtRows == 4);
  CHECK(small.rows.xtSets == 3);
  CHECK(small.rows.accBanks == 2);
  CHECK(small.rows.transposeBanks == 6);
  CHECK(small.rows.db);
  CHECK(small.rows.dbOnGpSimd);
  CHECK_FALSE(small.rows.dbInAccBank);
  // x depths in 4 partition groups of 32: the 16 of the 18 window depths that hold x (from
  // window depth 1) as 4 blocks of 4; dy depths likewise, 4 blocks of 4
  CHECK(small.rows.xGroups == 4);
  CHECK(small.rows.xGroupParts == 32);
  CHECK(small.rows.xGroupDepths == 4);
  CHECK(small.rows.xGroupFirst == 1);
  CHECK(small.rows.dyGroups == 4);
  CHECK(small.rows.dyGroupDepths == 4);
  // padding 2 before, 0 after: 7 x depths from window depth 2 in 4 blocks of 2
  const ConvBwdPlan shifted =
      planOf({1, 32, 7, 16, 64}, {3, 3, 3, 32, 32}, {{"padding", "2,0,1,1,1,1"}});
  CHECK(shifted.rows.xGroupFirst == 2);
  CHECK(shifted.rows.xGroupDepths == 2);
  CHECK(planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, {{"padding", "1"}, {"dw_x_groups", "off"}})
            .rows.xGroups == 1);
  const ConvBwdPlan noDb =
      planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32},
             {{"padding", "1"}, {"compute_db", "false"}, {"dw_row_pairs", "off"}});
  CHECK_FALSE(noDb.rows.db);
  CHECK(noDb.rows.transposeBanks == 6);
  // not packed: db stays a separate pass over dy
  CHECK_FALSE(planOf({1, 256, 8, 32, 32}, {3, 3, 3, 256, 256}, pad).rows.db);
  CHECK(small.rows.chunk[0] == 16);  // whole D and W, rows of each of the 2 bands of 32
  CHECK(small.rows.chunk[1] < 32);
  CHECK(small.rows.chunk[2] == 64);
  // C 256: C_in fills the PE columns, nothing to pack
  CHECK(planOf({1, 256, 8, 32, 32}, {3, 3, 3, 256, 256}, pad).rows.depthGroup == 1);
  // C_in 16, C_out 128: dy stationary (9 x 64 cycles a depth) beats packing (9 x 128)
  const ConvBwdPlan wide = planOf({1, 16, 8, 32, 32}, {3, 3, 3, 16, 128}, pad);
  CHECK(wide.rows.dyStationary);
  CHECK(wide.rows.depthGroup == 1);
  // with x stationary forced, packing is the better of the rest (2 x 128 moving columns)
  CHECK(planOf({1, 16, 8, 32, 32}, {3, 3, 3, 16, 128}, {{"padding", "1"}, {"dw_stationary", "x"}})
            .rows.depthGroup == 2);
  // too small a problem to pay for the depth-block additions; off when asked
  CHECK(planOf({1, 32, 4, 8, 8}, {3, 3, 3, 32, 32}, pad).rows.depthGroup == 1);
  CHECK(planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, {{"padding", "1"}, {"dw_depth_group", "1"}})
            .rows.depthGroup == 1);
}

TEST_CASE("conv3d_bwd plan: a forced dw_depth_group these shapes cannot pack is an error") {
  const std::string rule =
      " does not apply here (at most 1: packing needs x stationary, D stride and dilation 1, "
      "(group + Kd - 1) x C_in <= 128 and group x C_out <= 512)";
  CHECK_THROWS_WITH_AS(
      planOf({1, 32, 6, 8, 8}, {3, 3, 3, 32, 32}, {{"stride", "2"}, {"dw_depth_group", "2"}}),
      ("conv3d_bwd: dw_depth_group 2" + rule).c_str(), Error);
  CHECK_THROWS_WITH_AS(planOf({1, 64, 6, 8, 8}, {3, 3, 3, 64, 32}, {{"dw_depth_group", "2"}}),
                       ("conv3d_bwd: dw_depth_group 2" + rule).c_str(), Error);
}

TEST_CASE("conv3d_bwd plan: dy stationary packs no depths, whatever dw_depth_group is forced") {
  // Valid but ineffective, as matmul's m_tail_tiles with a direct tail: run warns about it.
  const ConvBwdPlan plan =
      planOf({1, 8, 6, 8, 8}, {3, 3, 3, 8, 8}, {{"dw_depth_group", "2"}, {"dw_stationary", "dy"}});
  CHECK(plan.rows.dyStationary);
  CHECK(plan.rows.depthGroup == 1);
}

TEST_CASE("conv3d_bwd dw packed: C_in 32 taps summed within partition halves, odd shapes") {
  // the store's tap sums: even kd by Vector adds (blocks in one half), odd kd by selection
  // matmuls moved by Scalar; Kd 3, fp32, B 2, C_out 40
  checkPacked({{2, 32, 5, 6, 11}, {3, 3, 3, 32, 40}, 0, {{"padding", "1"}}}, 2, true);
  // Kd 2 (3 slots), H stride 2 (no shared kh rows), bf16
  checkPacked({{1, 32, 6, 9, 7},
               {2, 3, 2, 32, 12},
               0,
               {{"stride", "1,2,1"}, {"padding", "0,1,1,1,0,0"}},
               Dtype::Bf16},
              2, false);
  // Kd 1: one Vector add per bank
  checkPacked({{1, 32, 4, 5, 6}, {1, 3, 3, 32, 9}, 0, {{"padding", "0,0,1,1,1,1"}}}, 2, true);
  // C_out 200: one packed accumulator a bank, a shift per pass
  checkPacked({{1, 32, 4, 5, 6}, {3, 3, 3, 32, 200}, 0, {{"padding", "1"}, {"dw_acc_banks", "2"}}},
              2, true);
}

TEST_CASE("conv3d_bwd dw packed: odd shapes against the reference") {
  // odd D (a short last group), C_out 20, bf16
  checkPacked({{1, 32, 5, 7, 9}, {3, 3, 3, 32, 20}, 0, {{"padding", "1"}}, Dtype::Bf16}, 2, true);
  // C_in 5, Kd 2, three depths a group, H/W stride 2, no padding, B 2, fp32
  checkPacked({{2, 5, 7, 6, 9}, {2, 3, 3, 5, 7}, 0, {{"stride", "1,2,2"}}}, 3, false);
  // C_in 10, six slots (60 columns), H/W dilation, asymmetric padding with depth padding
  // that leaves the first and last dy depth one tap short
  checkPacked({{1, 10, 6, 9, 8},
               {3, 2, 3, 10, 40},
               0,
               {{"dilation", "1,2,1"}, {"padding", "2,1,0,1,2,0"}},
               Dtype::Bf16},
              4, true);
  // Kd 1: slot g meets group g only
  checkPacked({{1, 12, 4, 5, 6}, {1, 3, 3, 12, 9}, 0, {{"padding", "0,0,1,1,1,1"}}}, 2, true);
  // one accumulator bank of 2 packed accumulators: 9 shifts in 5 passes
  ConvCase banked{{1, 8, 5, 6, 7}, {3, 3, 3, 8, 64}, 0, {{"padding", "1"}, {"dw_acc_banks", "1"}}};
  CHECK(planOf(banked.x, banked.filters,
               {{"padding", "1"}, {"dw_acc_banks", "1"}, {"dw_depth_group", "4"}}, Dtype::Fp32)
            .rows.passes.size() == 5);
  checkPacked(banked, 4, true);
  // W above 128 (boxes of one row) and dy by DMA transpose
  checkPacked({{1, 4, 3, 2, 140},
               {2, 1, 3, 4, 6},
               0,
               {{"padding", "0,0,0,0,1,1"}, {"dy_transpose", "dma"}}},
              2, false);
  // several chunks along H (the last of an odd row count: a box with one row group), B 2
  const ConvCase rows{{2, 4, 3, 41, 60}, {3, 3, 2, 4, 5}, 0, {{"padding", "1,1,1,1,0,1"}}};
  const ConvBwdPlan p = planOf(rows.x, rows.filters,
                               {{"padding", "1,1,1,1,0,1"}, {"dw_depth_group", "2"}}, Dtype::Fp32);
  CHECK(p.rows.boxH == 2);
  CHECK(p.rows.chunk[1] < 21);  // bands of 21 rows
  checkPacked(rows, 2, true);
}

TEST_CASE("conv3d_bwd plan: dw reuses xT row stationaries where their loads are exposed") {
  const Shape x{1, 32, 16, 64, 64}, f{3, 3, 3, 32, 32};
  const Params pad{{"padding", "1"}};
  // fp32 on trn2: a [128 positions; 4 depths x 32] stationary loads in 512 PE cycles, its
  // matmul (2 x 32 moving columns) takes 256
  const ConvBwdPlan fp32 = planOf(x, f, pad, Dtype::Fp32);
  CHECK(fp32.rows.shareKh);
  CHECK(fp32.rows.rowReuse);
  CHECK(fp32.rows.dyTBoxes == fp32.rows.xtRows);
  // bf16: 32 against 64 cycles, already hidden; off when asked
  const ConvBwdPlan bf16 = planOf(x, f, pad);
  CHECK_FALSE(bf16.rows.rowReuse);
  CHECK(bf16.rows.dyTBoxes == (bf16.rows.rowPairs ? 4 : 2));
  CHECK_FALSE(planOf(x, f, {{"padding", "1"}, {"dw_row_reuse", "off"}}, Dtype::Fp32).rows.rowReuse);
  CHECK(planOf(x, f, {{"padding", "1"}, {"dw_row_reuse", "on"}}).rows.rowReuse);
  // trn1 loads fp32 stationaries 4x faster (128 cycles against 256): hidden
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, pad);
  const ConvCore core = conv3dBwdCore({{"x_in", x}, {"filters", f}}, params, false);
  CHECK_FALSE(planConvBwd(core, Dtype::Fp32, sim::loadMachine("trn1").geometry, bwdOptions(params))
                  .rows.rowReuse);
  // no shared kh rows (H stride 2): nothing to reuse
  CHECK_FALSE(planOf({1, 32, 6, 9, 7}, {3, 3, 3, 32, 12},
                     {{"stride", "1,2,1"}, {"dw_depth_group", "2"}, {"dw_row_reuse", "on"}},
                     Dtype::Fp32)
                  .rows.rowReuse);
}

TEST_CASE("conv3d_bwd dw packed: xT row stationaries reused across kh, odd shapes") {
  const std::vector<std::pair<ConvCase, int64_t>> cases = {
      // C_in 32, C_out 40, B 2, fp32 (x and dy groups)
      {{{2, 32, 5, 6, 11}, {3, 3, 3, 32, 40}, 0, {{"padding", "1"}}}, 2},
      // odd D and H, C_out 20, bf16: bands of one row (the first box is the last)
      {{{1, 32, 5, 7, 9}, {3, 3, 3, 32, 20}, 0, {{"padding", "1"}}, Dtype::Bf16}, 2},
      // Kh 2 with H dilation 2 (boxes 2 rows apart), asymmetric padding, C_in 10, 4 depths
      {{{1, 10, 6, 9, 8},
        {3, 2, 3, 10, 40},
        0,
        {{"dilation", "1,2,1"}, {"padding", "2,1,0,1,2,0"}},
        Dtype::Bf16},
       4},
      // one accumulator bank: 9 shifts in 5 passes (a pass holds some kh of a kw), fp32
      {{{1, 8, 5, 6, 7}, {3, 3, 3, 8, 64}, 0, {{"padding", "1"}, {"dw_acc_banks", "1"}}}, 4},
      // several chunks along H, an odd row count, B 2, fp32
      {{{2, 4, 3, 41, 60}, {3, 3, 2, 4, 5}, 0, {{"padding", "1,1,1,1,0,1"}}}, 2},
      // C_in 20 (x groups with unloaded partitions), C_out 24, db, bf16
      {{{1, 20, 7, 9, 35}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}, Dtype::Bf16}, 2},
      // no padding, C_in 7, C_out 11, small planes, fp32
      {{{1, 7, 6, 12, 10}, {3, 3, 3, 7, 11}, 0, {}}, 2},
      // a tiny plane: 3 x 4, C_in 3, C_out 5
      {{{1, 3, 4, 3, 4}, {3, 3, 3, 3, 5}, 0, {{"padding", "1"}}, Dtype::Bf16}, 2},
  };
  for (const auto& [base, group] : cases) {
    ConvCase c = base;
    c.params.emplace_back("dw_row_reuse", "on");
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    Params forced = c.params;
    forced.emplace_back("dw_depth_group", std::to_string(group));
    CHECK(planOf(c.x, c.filters, forced, c.dtype).rows.rowReuse);
    checkPacked(c, group, true);
  }
  // with dx (dw in the tail overlap), fp32: reuse by the auto rule
  const ConvCase both{
      {1, 20, 5, 9, 13}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}, {"dw_depth_group", "2"}}};
  CHECK(planOf(both.x, both.filters, both.params, both.dtype).rows.rowReuse);
  testing::checkConvCase(conv3dBwdSpec(), both);
}

TEST_CASE("conv3d_bwd dw packed: x depths grouped on partitions, db in a spare slot, odd shapes") {
  struct Grouped {
    ConvCase c;
    int64_t groups, groupParts;
  };
  const std::vector<Grouped> cases = {
      // (x rows of 64 B or more: narrower ones are staged, not grouped)
      // C_in 20: 4 groups of 32 partitions (12 never loaded), odd D/H/W, C_out 24, db in a slot
      {{{1, 20, 7, 9, 35}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}, Dtype::Bf16}, 4, 32},
      // C_in 40, Kd 2: 2 groups of 64, fp32, asymmetric padding, H dilation, B 2, no db
      {{{2, 40, 5, 10, 17},
        {2, 2, 3, 40, 9},
        0,
        {{"padding", "1,0,2,1,1,0"}, {"dilation", "1,2,1"}, {"compute_db", "false"}}},
       2,
       64},
      // depth padding 2 before, 1 after (x from window depth 2), C_in 32, bf16
      {{{1, 32, 6, 7, 33}, {3, 3, 3, 32, 16}, 0, {{"padding", "2,1,1,1,1,1"}}, Dtype::Bf16}, 4, 32},
      // Kd 2 (17 window depths: a short last block), W stride 2, fp32
      {{{1, 8, 16, 6, 19}, {2, 3, 3, 8, 16}, 0, {{"padding", "0,1,1,1,1,1"}, {"stride", "1,1,2"}}},
       4,
       32},
  };
  for (const Grouped& g : cases) {
    ConvCase c = g.c;
    c.params.emplace_back("dw_depth_group", "2");
    c.params.emplace_back("compute_dx", "false");
    const ConvBwdPlan p = planOf(c.x, c.filters, c.params, c.dtype);
    REQUIRE(p.dwMethod == DwMethod::Rows);
    CHECK(p.rows.shareKh);
    CHECK(p.rows.xGroups == g.groups);
    CHECK(p.rows.xGroupParts == g.groupParts);
    testing::checkConvCase(conv3dBwdSpec(), c);
  }
  const ConvBwdPlan withDb = planOf({1, 20, 7, 9, 35}, {3, 3, 3, 20, 24},
                                    {{"padding", "1"}, {"dw_depth_group", "2"}}, Dtype::Bf16);
  CHECK(withDb.rows.db);
  CHECK(withDb.rows.dbOnGpSimd);
  // dy groups off: db by dyT stationaries in a spare accumulator slot
  const ConvBwdPlan dbByPe =
      planOf({1, 20, 7, 9, 35}, {3, 3, 3, 20, 24},
             {{"padding", "1"}, {"dw_depth_group", "2"}, {"dw_dy_groups", "off"}}, Dtype::Bf16);
  CHECK_FALSE(dbByPe.rows.dbOnGpSimd);
  CHECK(dbByPe.rows.dbInAccBank);
}

TEST_CASE(
    "conv3d_bwd dw packed: dy depths grouped on partitions (db on GpSimd), or not (db by dyT)") {
  struct Grouped {
    ConvCase c;
    int64_t groups, groupParts, groupDepths;
  };
  const std::vector<Grouped> cases = {
      // C_out 24: 4 groups of 32 partitions (8 never loaded), D 7 (last group 1 depth), db
      {{{1, 20, 7, 9, 35}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}, Dtype::Bf16}, 4, 32, 2},
      // C_out 40: 2 groups of 64, fp32, B 2, asymmetric padding, db from 3 depths a matmul
      {{{2, 12, 5, 10, 17}, {2, 3, 3, 12, 40}, 0, {{"padding", "1,0,2,1,1,0"}}}, 2, 64, 3},
      // D 3 (the last group empty), C_out 16, H dilation, no db
      {{{1, 8, 3, 11, 20},
        {3, 2, 3, 8, 16},
        0,
        {{"padding", "1,1,2,2,1,1"}, {"dilation", "1,2,1"}, {"compute_db", "false"}},
        Dtype::Bf16},
       4,
       32,
       1},
  };
  for (const Grouped& g : cases) {
    for (const char* dyGroups : {"auto", "off"}) {
      ConvCase c = g.c;
      c.params.emplace_back("dw_depth_group", "2");
      c.params.emplace_back("compute_dx", "false");
      c.params.emplace_back("dw_dy_groups", dyGroups);
      INFO("x_in " << shapeText(c.x) << " dw_dy_groups " << dyGroups);
      const ConvBwdPlan p = planOf(c.x, c.filters, c.params, c.dtype);
      REQUIRE(p.dwMethod == DwMethod::Rows);
      CHECK(p.rows.shareKh);
      const bool grouped = std::string(dyGroups) == "auto";
      CHECK(p.rows.dyGroups == (grouped ? g.groups : 1));
      CHECK(p.rows.dbOnGpSimd == (grouped && p.rows.db));
      if (grouped) {
        CHECK(p.rows.dyGroupParts == g.groupParts);
        CHECK(p.rows.dyGroupDepths == g.groupDepths);
      }
      testing::checkConvCase(conv3dBwdSpec(), c);
    }
  }
  // C_out 80: one group of 96 partitions would not leave room for a second
  CHECK(planOf({1, 8, 6, 8, 16}, {3, 3, 3, 8, 80}, {{"padding", "1"}, {"dw_depth_group", "2"}})
            .rows.dyGroups == 1);
  // dy by DMA transpose: nothing to group
  CHECK(planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, {{"padding", "1"}, {"dy_transpose", "dma"}})
            .rows.dyGroups == 1);
}

TEST_CASE("conv3d_bwd dw packed: 64 partitions and a 64x64 PE array") {
  const ConvCase c{{1, 8, 6, 7, 9},
                   {3, 3, 3, 8, 24},
                   0,
                   {{"padding", "1"}, {"dw_depth_group", "4"}, {"compute_dx", "false"}}};
  testing::checkConvCase(conv3dBwdSpec(), c, testing::trn2Half());
  static const sim::MachineConfig pe64 = sim::loadMachine("trn2", {"pe_rows=64", "pe_cols=64"});
  testing::checkConvCase(conv3dBwdSpec(), c, pe64);
}

TEST_CASE("conv3d_bwd dw packed: the automatic choice on a shape that takes it, all gradients") {
  const ConvCase c{{1, 32, 12, 16, 32}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(planOf(c.x, c.filters, c.params).rows.depthGroup == 2);
  testing::checkConvCase(conv3dBwdSpec(), c);
}

}  // namespace
}  // namespace neuronsim::kernels
