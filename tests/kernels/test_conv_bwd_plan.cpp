// The conv3d_bwd planner's decisions (which dw method, passes, PSUM banking) and each forced
// path on odd shapes against the reference (interpreter == timed bit for bit, no races).
#include <doctest/doctest.h>

#include <string>

#include "isa/error.h"
#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

ConvBwdPlan planOf(const Shape& x, const Shape& filters,
                   const std::vector<std::pair<std::string, std::string>>& given,
                   Dtype dtype = Dtype::Bf16) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, given);
  const ConvCore core = conv3dBwdCore({{"x_in", x}, {"filters", filters}}, params, false);
  return planConvBwd(core, dtype, testing::trn2().geometry, bwdOptions(params));
}

void check(ConvCase c, const std::string& method) {
  c.params.emplace_back("dw_method", method);
  testing::checkConvCase(conv3dBwdSpec(), c);
}

TEST_CASE("conv3d_bwd plan: C 256 3x3x3 takes Rows, two (kh, kw) shifts per pass") {
  const ConvBwdPlan p = planOf({1, 256, 8, 32, 32}, {3, 3, 3, 256, 256}, {{"padding", "1"}});
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.ciTiles == 2);
  CHECK(p.rows.coWidth == 256);
  CHECK(p.rows.accsPerBank == 2);
  CHECK(p.rows.passes.size() == 5);  // 9 shifts x 6 accumulators in 12 per pass
  CHECK(p.rows.passes.front().size() == 12);
  CHECK(p.rows.xtSets == 4);
  CHECK(p.rows.chunk[0] == 8);  // chunks keep their depth
  CHECK(p.rows.boxH * p.rows.boxW <= 128);
  int64_t units = 0;
  for (const auto& pass : p.rows.passes) units += static_cast<int64_t>(pass.size());
  CHECK(units == 27 * 2);
}

TEST_CASE("conv3d_bwd plan: dy arrives by DMA transpose when a box DMA moves >= 64 KiB") {
  const Shape f{3, 3, 3, 256, 256};
  CHECK(planOf({1, 256, 8, 32, 32}, f, {{"padding", "1"}}).rows.dyByDma);  // 128 x 256 x 2 B
  CHECK_FALSE(planOf({1, 32, 8, 32, 32}, {3, 3, 3, 32, 32}, {{"padding", "1"}}).rows.dyByDma);
  CHECK_FALSE(planOf({1, 256, 8, 32, 32}, f, {{"dy_transpose", "pe"}}).rows.dyByDma);
  CHECK(planOf({1, 4, 2, 3, 3}, {1, 1, 1, 4, 4}, {{"dy_transpose", "dma"}}).rows.dyByDma);
  const ConvCore core = conv3dBwdCore({{"x_in", {1, 4, 2, 3, 3}}, {"filters", {1, 1, 1, 4, 4}}},
                                      parseParams(conv3dBwdSpec(), {}), false);
  ConvBwdOptions bad;
  bad.dyTranspose = "tensor";
  CHECK_THROWS_WITH_AS(planConvBwd(core, Dtype::Bf16, testing::trn2().geometry, bad),
                       "conv3d_bwd: dy_transpose 'tensor' is not auto, pe or dma", Error);
}

TEST_CASE("conv3d_bwd plan: forced choices") {
  const Shape x{1, 8, 4, 6, 6}, f{3, 3, 3, 8, 600};
  CHECK(planOf(x, f, {{"dw_method", "boxes"}}).dwMethod == DwMethod::Boxes);
  const ConvBwdPlan one = planOf(x, f, {{"dw_acc_banks", "1"}});
  REQUIRE(one.dwMethod == DwMethod::Rows);
  CHECK(one.rows.coWidth == 512);
  CHECK(one.rows.accsPerBank == 1);
  CHECK(one.rows.passes.size() == 27);  // a shift's 3 kd taps split over passes
  CHECK_THROWS_WITH_AS(planOf(x, f, {{"dw_acc_banks", "7"}}),
                       "conv3d_bwd: dw_acc_banks 7 is outside 1..6 (2 PSUM banks hold transposes)",
                       Error);
}

TEST_CASE("conv3d_bwd plan: a dilation too wide for a window falls back to Boxes") {
  const Shape x{1, 2, 1, 410, 410}, f{1, 3, 3, 2, 3};
  const std::vector<std::pair<std::string, std::string>> wide{{"dilation", "1,200,200"},
                                                              {"padding", "0,0,1,0,0,1"}};
  CHECK(planOf(x, f, wide, Dtype::Fp32).dwMethod == DwMethod::Boxes);
  auto dwOnly = wide;
  dwOnly.emplace_back("compute_dx", "false");
  testing::checkConvCase(conv3dBwdSpec(), {x, f, 0, dwOnly});
  auto forced = wide;
  forced.emplace_back("dw_method", "rows");
  CHECK_THROWS_AS(planOf(x, f, forced, Dtype::Fp32), Error);
}

TEST_CASE("conv roofline flops exclude taps over padding and cropped outputs") {
  const KernelSpec fwd = conv3dSpec();
  ShapeMap shapes{{"x_in", {1, 2, 5, 4, 3}}, {"filters", {3, 1, 1, 2, 3}}};
  // D: 5 outputs x 3 taps, 2 over padding; H 4 x 1; W 3 x 1.
  CHECK(fwd.flops(shapes, parseParams(fwd, {{"padding", "1,1,0,0,0,0"}})) == 2.0 * 6 * 13 * 4 * 3);
  const KernelSpec tr = conv3dTransposeSpec();
  // out[o] += x[i] w[k] for o = 2i - 1 + k, i < 3, k < 3: o = -1 is cropped.
  shapes = {{"x_in", {1, 1, 3, 1, 1}}, {"filters", {3, 1, 1, 1, 1}}};
  CHECK(tr.flops(shapes, parseParams(tr, {{"stride", "2,1,1"},
                                          {"padding", "1,1,0,0,0,0"},
                                          {"output_padding", "1,0,0"}})) == 2.0 * 8);
  const KernelSpec bwd = conv3dBwdSpec();
  shapes = {{"x_in", {1, 2, 5, 4, 3}}, {"filters", {3, 1, 1, 2, 3}}, {"dy", {1, 3, 5, 4, 3}}};
  CHECK(bwd.flops(shapes, parseParams(bwd, {{"padding", "1,1,0,0,0,0"},
                                            {"compute_dx", "false"}})) == 2.0 * 6 * 13 * 4 * 3);
}

TEST_CASE("conv3d_bwd rows: C_in 1 and 3, B 2, stride 2, fp32") {
  check({{2, 1, 5, 6, 7}, {3, 2, 3, 1, 3}, 0, {{"stride", "2"}, {"padding", "1"}}}, "rows");
  check({{1, 3, 4, 9, 5}, {2, 3, 3, 3, 5}, 0, {{"stride", "1,2,2"}}}, "rows");
}

TEST_CASE("conv3d_bwd rows: C_in 130, C_out 130, dilation and asymmetric padding, bf16") {
  check({{1, 130, 4, 5, 6},
         {2, 3, 2, 130, 130},
         0,
         {{"dilation", "2,1,2"}, {"padding", "1,0,2,1,0,1"}},
         Dtype::Bf16},
        "rows");
}

TEST_CASE("conv3d_bwd rows: one accumulator bank, C_out 520 (two slabs), shifts split") {
  const ConvCase c{{1, 4, 3, 4, 4},
                   {2, 2, 2, 4, 520},
                   0,
                   {{"padding", "1"}, {"dw_acc_banks", "1"}, {"compute_dx", "false"}}};
  const ConvBwdPlan p = planOf(c.x, c.filters, c.params, Dtype::Fp32);
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.accBanks == 1);
  CHECK(p.rows.coWidth == 512);
  CHECK(p.rows.passes.size() == 8);  // 8 taps x 1 C_in tile, one 512-column accumulator a pass
  check(c, "rows");
}

TEST_CASE("conv3d_bwd plan: dy stationary when C_out fits the PE columns and it saves cycles") {
  const std::vector<std::pair<std::string, std::string>> pad{{"padding", "1"}};
  // C_in 16, C_out 128: 27 x 128 cycles a depth with x stationary, 9 x 48 with dy stationary
  const ConvBwdPlan wide = planOf({1, 16, 8, 32, 32}, {3, 3, 3, 16, 128}, pad);
  REQUIRE(wide.dwMethod == DwMethod::Rows);
  CHECK(wide.rows.dyStationary);
  CHECK(wide.rows.accsPerBank == 32);  // [co, 16 ci] accumulators
  CHECK(wide.rows.passUnits == 27);
  // equal C_in and C_out of 32: 27 x 32 = 9 x 96 cycles, no saving
  CHECK_FALSE(planOf({1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, pad).rows.dyStationary);
  // C_out 256 exceeds the PE columns
  CHECK_FALSE(planOf({1, 256, 8, 32, 32}, {3, 3, 3, 256, 256}, pad).rows.dyStationary);
  // a small problem saves too little to pay for the accumulator transposes
  CHECK_FALSE(planOf({1, 8, 8, 16, 16}, {3, 3, 3, 8, 64}, pad).rows.dyStationary);
  CHECK(planOf({1, 8, 8, 16, 16}, {3, 3, 3, 8, 64}, {{"dw_stationary", "dy"}}).rows.dyStationary);
  CHECK_FALSE(
      planOf({1, 16, 8, 32, 32}, {3, 3, 3, 16, 128}, {{"dw_stationary", "x"}}).rows.dyStationary);
  const ConvCore core = conv3dBwdCore({{"x_in", {1, 4, 2, 3, 3}}, {"filters", {1, 1, 1, 4, 4}}},
                                      parseParams(conv3dBwdSpec(), {}), false);
  CHECK_THROWS_WITH_AS(planOf({1, 4, 2, 3, 3}, {1, 1, 1, 4, 130}, {{"dw_stationary", "dy"}}),
                       "conv3d_bwd: dw_stationary dy needs C_out <= 128 (the PE columns), not 130",
                       Error);
  ConvBwdOptions bad;
  bad.dwStationary = "both";
  CHECK_THROWS_WITH_AS(planConvBwd(core, Dtype::Bf16, testing::trn2().geometry, bad),
                       "conv3d_bwd: dw_stationary 'both' is not auto, x or dy", Error);
}

TEST_CASE("conv3d_bwd rows, dy stationary: odd shapes against the reference") {
  const std::vector<std::pair<std::string, std::string>> dy{{"dw_stationary", "dy"}};
  auto with = [&](std::vector<std::pair<std::string, std::string>> params) {
    params.insert(params.end(), dy.begin(), dy.end());
    return params;
  };
  // C_in 3, C_out 7, stride 2, B 2, fp32
  check({{2, 3, 5, 6, 7}, {3, 2, 3, 3, 7}, 0, with({{"stride", "2"}, {"padding", "1"}})}, "rows");
  // C_in 130 (two C_in tiles, the last of 2 channels), dilation, asymmetric padding, bf16
  check({{1, 130, 4, 5, 6},
         {2, 3, 2, 130, 20},
         0,
         with({{"dilation", "2,1,2"}, {"padding", "1,0,2,1,0,1"}}),
         Dtype::Bf16},
        "rows");
  // C_out 128 (all PE columns); one accumulator bank of 10 [co, 50 ci] units: passes and kd
  // runs split at bank ends; dw only
  const ConvCase banked{{1, 50, 6, 5, 11},
                        {3, 3, 3, 50, 128},
                        0,
                        with({{"padding", "1"}, {"dw_acc_banks", "1"}, {"compute_dx", "false"}})};
  const ConvBwdPlan p = planOf(banked.x, banked.filters, banked.params, Dtype::Fp32);
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.dyStationary);
  CHECK(p.rows.accsPerBank == 10);
  CHECK(p.rows.passes.size() == 3);
  check(banked, "rows");
  // the auto choice on a shape that takes it
  const ConvCase autoCase{{1, 5, 9, 17, 19}, {3, 3, 3, 5, 100}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK(planOf(autoCase.x, autoCase.filters, autoCase.params).rows.dyStationary);
  check(autoCase, "auto");
}

TEST_CASE("conv3d_bwd rows: W above 128 (boxes of one row), chunked plane") {
  const ConvCase c{{1, 2, 2, 3, 150}, {1, 3, 3, 2, 4}, 0, {{"padding", "0,0,1,1,1,1"}}};
  const ConvBwdPlan p = planOf(c.x, c.filters, c.params, Dtype::Fp32);
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.boxH == 1);
  CHECK(p.rows.boxW == 128);
  check(c, "rows");
}

TEST_CASE("conv3d_bwd rows: dy by DMA transpose on odd shapes, C_out 520 in two slabs") {
  for (const char* dtype : {"fp32", "bf16"}) {
    CAPTURE(dtype);
    const Dtype dt = std::string(dtype) == "fp32" ? Dtype::Fp32 : Dtype::Bf16;
    ConvCase c{{2, 5, 5, 7, 9},
               {3, 2, 3, 5, 520},
               0,
               {{"padding", "1,2,0,1,1,1"}, {"stride", "2,1,2"}, {"dy_transpose", "dma"}},
               dt};
    const ConvBwdPlan p = planOf(c.x, c.filters, c.params, dt);
    REQUIRE(p.dwMethod == DwMethod::Rows);
    CHECK(p.rows.dyByDma);
    CHECK(p.rows.coWidth == 512);
    check(c, "rows");
  }
}

TEST_CASE("conv3d_bwd rows: kd taps that meet only depth padding (skipped matmuls, zero dw)") {
  // D 1 with Kd 3 and depth padding 1: kd 0 and 2 read only padding; dw there is exactly 0.
  for (const char* dy : {"pe", "dma"})
    check({{1, 3, 1, 4, 5}, {3, 2, 2, 3, 6}, 0, {{"padding", "1,1,0,1,1,0"}, {"dy_transpose", dy}}},
          "rows");
}

TEST_CASE("conv3d_bwd boxes: C_in 3, stride 2, dilation, B 2, bf16") {
  check(
      {{2, 3, 6, 7, 8}, {3, 2, 2, 3, 5}, 0, {{"stride", "2"}, {"dilation", "1,2,1"}}, Dtype::Bf16},
      "boxes");
  check({{1, 130, 3, 4, 5}, {2, 2, 2, 130, 7}, 0, {{"padding", "1,0,0,1,1,0"}}}, "boxes");
}

}  // namespace
}  // namespace neuronsim::kernels
