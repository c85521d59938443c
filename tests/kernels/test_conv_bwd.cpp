// conv3d_bwd against a direct reference of the forward sum's gradients on odd shapes and every
// subset of dx/dw/db, interpreter vs timed bit for bit, and its errors.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "kernels/conv/conv_bwd_build.h"
#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_kernels.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

void check(const ConvCase& c) {
  testing::checkConvCase(conv3dBwdSpec(), c);
}

TEST_CASE("conv3d_bwd: 3x3x3, padding 1, all gradients") {
  check({{1, 4, 4, 5, 6}, {3, 3, 3, 4, 6}, 0, {{"padding", "1"}}});
}

TEST_CASE("conv3d_bwd: stride 2 with a remainder row, B 2") {
  check({{2, 3, 6, 7, 5}, {2, 3, 2, 3, 5}, 0, {{"stride", "2"}}});
}

TEST_CASE("conv3d_bwd: asymmetric padding and dilation") {
  check({{1, 5, 6, 6, 7}, {2, 3, 2, 5, 4}, 0, {{"padding", "0,2,1,0,2,1"}, {"dilation", "2,1,3"}}});
}

TEST_CASE("conv3d_bwd: C_in 130 and C_out 130") {
  check({{1, 130, 2, 3, 4}, {2, 2, 1, 130, 130}, 0, {}});
}

TEST_CASE("conv3d_bwd: C_in 1, stride larger than the kernel") {
  check({{1, 1, 7, 8, 9}, {2, 2, 2, 1, 3}, 0, {{"stride", "3,3,4"}}});
}

TEST_CASE("conv3d_bwd: bf16") {
  check({{1, 16, 4, 6, 6}, {3, 3, 3, 16, 24}, 0, {{"padding", "1"}}, Dtype::Bf16});
}

TEST_CASE("conv3d_bwd: small channel counts pair W outputs in dx") {
  const std::vector<ConvCase> cases = {
      {{1, 3, 4, 6, 9}, {3, 3, 3, 3, 3}, 0, {{"padding", "1,0,0,2,1,1"}}},
      {{1, 17, 4, 5, 11}, {3, 3, 3, 17, 17}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{2, 32, 3, 6, 10}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{1, 32, 3, 4, 7}, {3, 3, 3, 32, 20}, 0, {{"padding", "0,1,2,0,1,0"}}},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    const ConvPlan plan = planConv(dxCore(forward), c.dtype, testing::trn2().geometry);
    CHECK(plan.pairs == 2);
    CHECK(plan.positionsStationary == (c.dtype == Dtype::Bf16));  // fp32 on trn2: filters
    check(c);
  }
  // dx C_out 33..64 (forward C_in) pairs in quadrant groups of one block per partition half;
  // blocks spanning planes would put the odd block a half away from the outputs (A1): unpaired
  for (const auto& [c, pairs] :
       {std::pair{ConvCase{{1, 48, 3, 20, 40},
                           {3, 3, 3, 48, 20},
                           0,
                           {{"padding", "0,1,2,0,1,0"}},
                           Dtype::Bf16},
                  2},
        std::pair{ConvCase{{1, 64, 2, 33, 17}, {3, 3, 3, 64, 32}, 0, {{"padding", "1"}}}, 2},
        std::pair{ConvCase{{1, 48, 3, 4, 7}, {3, 3, 3, 48, 20}, 0, {{"padding", "0,1,2,0,1,0"}}},
                  1}}) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}},
                                           parseParams(conv3dBwdSpec(), c.params), false);
    const ConvPlan plan = planConv(dxCore(forward), c.dtype, testing::trn2().geometry);
    CHECK(plan.pairs == pairs);
    CHECK(plan.quadrantGroups == (pairs == 2));
    check(c);
  }
  // stride 2 dilates dx's input: no packing, no pairs, still exact
  const ConvCase strided{
      {1, 17, 5, 6, 7}, {3, 3, 3, 17, 17}, 0, {{"stride", "2"}, {"padding", "1"}}};
  const ConvCore forward = conv3dBwdCore({{"x_in", strided.x}, {"filters", strided.filters}},
                                         parseParams(conv3dBwdSpec(), strided.params), false);
  CHECK(planConv(dxCore(forward), strided.dtype, testing::trn2().geometry).pairs == 1);
  check(strided);
}

TEST_CASE("conv3d_bwd: dx packed windows loaded straight from dy, stored plane by plane") {
  // dy rows of 128 B or more load into each slot's padded window without staging; chunks span
  // several depths, so finished planes are stored while later ones compute
  const std::vector<ConvCase> cases = {
      {{1, 20, 5, 6, 67}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{2, 12, 4, 5, 33}, {3, 3, 3, 12, 7}, 0, {{"padding", "1,0,0,2,1,1"}}},
      {{1, 32, 12, 20, 64},
       {2, 3, 3, 32, 32},
       0,
       {{"padding", "0,1,1,1,1,1"}, {"compute_dw", "false"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    const ConvPlan plan = planConv(dxCore(forward), c.dtype, testing::trn2().geometry);
    CHECK(plan.pack > 1);
    CHECK_FALSE(plan.staged);
    CHECK(plan.chunk[0] > 1);
    check(c);
  }
  // planes of 2048 outputs or more: single-plane chunks over a ring of dy planes (two batches;
  // C 32 fills the filter slots, whose PE transposes then need no full memset), blocks grouped
  // over the partition quadrants, filters PE-transposed
  const std::vector<ConvCase> rolling = {
      {{2, 20, 3, 32, 64},
       {3, 3, 3, 20, 24},
       0,
       {{"padding", "1"}, {"compute_dw", "false"}},
       Dtype::Bf16},
      {{1, 32, 4, 40, 53},
       {3, 3, 3, 32, 32},
       0,
       {{"padding", "1,1,0,2,1,1"}, {"compute_dw", "false"}}},
  };
  for (const ConvCase& c : rolling) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    const ConvPlan plan = planConv(dxCore(forward), c.dtype, testing::trn2().geometry);
    CHECK(plan.rollingPlanes);
    CHECK(plan.slotCopies == (c.dtype == Dtype::Bf16));           // auto: not behind fp32 matmuls
    CHECK(plan.positionsStationary == (c.dtype == Dtype::Bf16));  // fp32 on trn2: filters
    CHECK(plan.quadrantGroups == (c.dtype == Dtype::Bf16));
    check(c);
  }
}

TEST_CASE("conv3d_bwd: fp32 dx on trn1 keeps its plane ring with filters as the stationary") {
  // Positions as the stationary keeps 8 KiB per partition for its sub-block results; on trn1's
  // 192 KiB that left no room for the ring of 9 fp32 planes of 66 x 66 (the build failed: 'SBUF
  // tile pairs_out_4 asks 1024 bytes'), so auto takes filters, whose plan rolls.
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  const KernelSpec spec = conv3dBwdSpec();
  const ConvCase c{{1, 32, 4, 64, 64},
                   {3, 3, 3, 32, 32},
                   0,
                   {{"padding", "1"}, {"compute_dw", "false"}, {"compute_db", "false"}}};
  const ParamValues params = parseParams(spec, c.params);
  const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
  const ConvPlan plan = planConv(dxCore(forward), c.dtype, trn1.geometry);
  CHECK(plan.rollingPlanes);
  CHECK_FALSE(plan.positionsStationary);
  ConvOptions positions;
  positions.stationary = "positions";
  CHECK_FALSE(planConv(dxCore(forward), c.dtype, trn1.geometry, positions).rollingPlanes);
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  for (const auto& [name, shape] : spec.deriveShapes(shapes, params)) shapes.emplace(name, shape);
  CHECK_NOTHROW(
      buildKernel(spec, params, checkShapes(spec, shapes, params), c.dtype, trn1.geometry));
}

TEST_CASE("conv3d_bwd: dx plane pairs, two output planes per matmul, on odd shapes") {
  // fp32 on trn2 (filters as the stationary of 64 columns): one matmul per window plane serves
  // planes p and p + 1 (plane p + 1's rows from partition 64); odd D ends with a one-plane chunk
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  auto dxPlan = [](const ConvCase& c, const sim::MachineConfig& machine) {
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    return planConv(dxCore(forward), c.dtype, machine.geometry, dxOptions(params));
  };
  const std::vector<std::pair<std::string, std::string>> dxOnly = {{"compute_dw", "false"},
                                                                   {"compute_db", "false"}};
  auto with = [&](ConvCase c) {
    c.params.insert(c.params.end(), dxOnly.begin(), dxOnly.end());
    return c;
  };
  const std::vector<ConvCase> paired = {
      with({{1, 32, 4, 40, 53}, {3, 3, 3, 32, 32}, 0, {{"padding", "1,1,0,2,1,1"}}}),
      with({{1, 20, 5, 33, 71}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}}),
      with({{2, 32, 3, 32, 64}, {3, 3, 3, 32, 30}, 0, {{"padding", "1,0,1,1,0,1"}}}),
      with({{1, 17, 5, 45, 50}, {2, 3, 3, 17, 20}, 0, {{"padding", "0,1,1,0,1,1"}}}),
      with({{1, 9, 4, 37, 61}, {3, 3, 2, 9, 13}, 0, {{"padding", "2,0,1,1,1,0"}}}),
  };
  for (const ConvCase& c : paired) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ConvPlan plan = dxPlan(c, testing::trn2());
    REQUIRE(plan.planePairs);
    CHECK(plan.chunk[0] == 2);
    CHECK_FALSE(plan.positionsStationary);
    check(c);
  }
  // trn1 fp32 (filters: positions do not fit beside the ring), bf16 forced onto filters with
  // slot copies, dx C_out 40 without W pairs
  const ConvCase onTrn1 = with({{1, 32, 3, 64, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}});
  const ConvPlan trn1Plan = dxPlan(onTrn1, trn1);
  REQUIRE(trn1Plan.planePairs);
  // trn1's strided HBM share: a plane's slot loads outlast its paired matmuls, so the slot pairs
  // share them (trn2: the loads hide)
  CHECK(trn1Plan.slotCopies);
  CHECK_FALSE(dxPlan(paired[0], testing::trn2()).slotCopies);
  testing::checkConvCase(conv3dBwdSpec(), onTrn1, trn1);
  const ConvCase bf16 = with({{1, 40, 3, 40, 64},
                              {3, 3, 3, 40, 32},
                              0,
                              {{"padding", "1"}, {"dx_stationary", "filters"}},
                              Dtype::Bf16});
  const ConvPlan bf16Plan = dxPlan(bf16, testing::trn2());
  REQUIRE(bf16Plan.planePairs);
  CHECK(bf16Plan.slotCopies);
  CHECK(bf16Plan.pairs == 1);
  check(bf16);
  // off keeps single planes; auto leaves positions-stationary bf16 and C_out above the half alone
  ConvCase off = paired[0];
  off.params.emplace_back("dx_plane_pairs", "off");
  CHECK_FALSE(dxPlan(off, testing::trn2()).planePairs);
  CHECK(dxPlan(off, testing::trn2()).chunk[0] == 1);
  ConvCase positions = paired[0];
  positions.dtype = Dtype::Bf16;
  CHECK_FALSE(dxPlan(positions, testing::trn2()).planePairs);
  const ConvCase wide = with({{1, 72, 4, 40, 53}, {3, 3, 3, 72, 32}, 0, {{"padding", "1"}}});
  CHECK(dxPlan(wide, testing::trn2()).rollingPlanes);
  CHECK_FALSE(dxPlan(wide, testing::trn2()).planePairs);
}

TEST_CASE("conv3d_bwd: dx slot copies spread over VectorE and ScalarE where VectorE lags") {
  // Without VectorE's bf16 performance mode (trn1) a plane's slot copies outlast its matmuls, so
  // auto spreads them; on trn2 (4x copies) VectorE keeps them. Odd W and C_in below 32.
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  const std::vector<ConvCase> cases = {
      {{1, 32, 3, 40, 64},
       {3, 3, 3, 32, 32},
       0,
       {{"padding", "1"}, {"compute_dw", "false"}, {"compute_db", "false"}},
       Dtype::Bf16},
      {{1, 20, 4, 33, 71},
       {3, 3, 3, 20, 24},
       0,
       {{"padding", "1,0,1,1,0,1"}, {"compute_dw", "false"}},
       Dtype::Bf16},
  };
  const std::vector<isa::Engine> vector{isa::Engine::Vector};
  const std::vector<isa::Engine> spread{isa::Engine::Vector, isa::Engine::Scalar};
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    const ConvPlan onTrn1 = planConv(dxCore(forward), c.dtype, trn1.geometry);
    REQUIRE(onTrn1.slotCopies);
    CHECK(onTrn1.copyEngines == spread);
    CHECK(planConv(dxCore(forward), c.dtype, testing::trn2().geometry).copyEngines == vector);
    ConvOptions forced;
    forced.slotCopyEngines = "vector";
    CHECK(planConv(dxCore(forward), c.dtype, trn1.geometry, forced).copyEngines == vector);
    forced.slotCopyEngines = "spread";
    CHECK(planConv(dxCore(forward), c.dtype, testing::trn2().geometry, forced).copyEngines ==
          spread);
    testing::checkConvCase(conv3dBwdSpec(), c, trn1);
  }
}

TEST_CASE("conv3d_bwd: dx schedule parameters reach the conv core") {
  const ConvCase base{{1, 24, 4, 6, 19}, {3, 3, 3, 24, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  auto planOf = [&](std::vector<std::pair<std::string, std::string>> extra) {
    ConvCase c = base;
    c.params.insert(c.params.end(), extra.begin(), extra.end());
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    return planConv(dxCore(forward), c.dtype, testing::trn2().geometry, dxOptions(params));
  };
  CHECK(planOf({}).positionsStationary);
  CHECK_FALSE(planOf({{"dx_stationary", "filters"}}).positionsStationary);
  CHECK(planOf({{"dx_w_pairs", "off"}}).pairs == 1);
  const ConvPlan small = planOf({{"dx_chunk_positions", "40"}});
  CHECK(small.chunk[0] * small.chunk[1] * small.chunk[2] <= 40);
  ConvCase forced = base;
  forced.params.insert(forced.params.end(),
                       {{"dx_stationary", "filters"}, {"dx_chunk_positions", "40"}});
  check(forced);
}

TEST_CASE("conv3d_bwd: dx_psum_buffers counts the PSUM of positions as the stationary") {
  // dx blocks of 16 rows x 32 pairs fill a bank each: 8 leave none for the sub-block results
  auto withBuffers = [](const std::string& buffers) {
    return ConvCase{{1, 32, 2, 40, 64},
                    {3, 3, 3, 32, 32},
                    0,
                    {{"padding", "1"}, {"dx_psum_buffers", buffers}, {"compute_dw", "false"}},
                    Dtype::Bf16};
  };
  auto planOf = [](const ConvCase& c) {
    const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
    const ConvCore forward = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
    return planConv(dxCore(forward), c.dtype, testing::trn2().geometry, dxOptions(params));
  };
  CHECK_THROWS_WITH_AS(planOf(withBuffers("8")),
                       "conv3d_bwd: dx_psum_buffers 8 leaves no PSUM room for the 8 sub-block "
                       "results of positions as the stationary (at most 7 here)",
                       Error);
  CHECK(planOf(withBuffers("7")).psumBuffers == 7);
  check(withBuffers("7"));
}

TEST_CASE("conv3d_bwd: the dx parameters are the conv core's, named dx_") {
  std::vector<std::string> names;
  for (const ParamSpec& p : dxScheduleParams()) {
    names.push_back(p.name);
    CHECK(p.meaning.starts_with("dx "));
    CHECK(p.schedule);
  }
  CHECK(names == std::vector<std::string>{"dx_chunk_positions", "dx_psum_buffers", "dx_w_pairs",
                                          "dx_stationary", "dx_slot_copies", "dx_slot_copy_engines",
                                          "dx_plane_pairs"});
  const ParamValues params = parseParams(conv3dBwdSpec(), {{"dx_chunk_positions", "77"},
                                                           {"dx_psum_buffers", "3"},
                                                           {"dx_w_pairs", "off"},
                                                           {"dx_stationary", "filters"}});
  const ConvOptions options = dxOptions(params);
  CHECK(options.chunkPositions == 77);
  CHECK(options.psumBuffers == 3);
  CHECK(options.wPairs == "off");
  CHECK(options.stationary == "filters");
  CHECK(options.tapPack == "auto");
  CHECK(options.paramPrefix == "dx_");
}

TEST_CASE("conv3d_bwd: dx only") {
  check({{1, 6, 5, 5, 5},
         {3, 3, 3, 6, 8},
         0,
         {{"stride", "2"}, {"compute_dw", "false"}, {"compute_db", "false"}}});
}

TEST_CASE("conv3d_bwd: dw only, C_out above one matmul's 512 columns") {
  check(
      {{1, 4, 3, 3, 3}, {2, 2, 2, 4, 600}, 0, {{"compute_dx", "false"}, {"compute_db", "false"}}});
}

TEST_CASE("conv3d_bwd: db only, bf16, C_out 130") {
  check({{2, 3, 3, 4, 5},
         {1, 1, 1, 3, 130},
         0,
         {{"compute_dx", "false"}, {"compute_dw", "false"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d_bwd: plane larger than one chunk") {
  // The automatic chunk holds a whole 60x60 plane; 1024 positions cut each plane in four.
  const ConvCase c{{1, 2, 2, 60, 60},
                   {1, 3, 3, 2, 3},
                   0,
                   {{"padding", "0,0,1,1,1,1"}, {"dx_chunk_positions", "1024"}}};
  const ParamValues params = parseParams(conv3dBwdSpec(), c.params);
  const ConvCore dx = dxCore(conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false));
  const ConvPlan plan = planConv(dx, c.dtype, testing::trn2().geometry, dxOptions(params));
  CHECK(plan.chunk[1] * plan.chunk[2] < dx.out[1] * dx.out[2]);
  check(c);
}

TEST_CASE("conv3d_bwd: 1x1x1 filter, stride 2") {
  check({{1, 8, 4, 6, 6}, {1, 1, 1, 8, 8}, 0, {{"stride", "2"}}});
}

TEST_CASE("conv3d_bwd: bf16, C_in 130, stride 2 with dilation and asymmetric padding") {
  check({{2, 130, 4, 5, 6},
         {2, 2, 3, 130, 12},
         0,
         {{"stride", "2,1,2"}, {"dilation", "1,2,1"}, {"padding", "1,0,0,1,2,0"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d_bwd: dw and db with a dilation too wide for an x window (per-tap columns)") {
  const ConvCase c{{1, 2, 1, 130, 130},
                   {1, 3, 3, 2, 3},
                   0,
                   {{"dilation", "1,60,60"},
                    {"padding", "0,0,1,2,3,0"},
                    {"compute_dx", "false"},
                    {"dw_method", "boxes"}}};
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  const ConvBwdPlan p =
      planConvBwd(conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false),
                  Dtype::Fp32, testing::trn2().geometry, bwdOptions(params));
  REQUIRE(p.dwMethod == DwMethod::Boxes);
  CHECK(p.boxes.perTap);
  check(c);
}

TEST_CASE("conv3d_bwd: errors name the kernel and the culprit") {
  const KernelSpec spec = conv3dBwdSpec();
  auto message = [&](const ShapeMap& shapes,
                     const std::vector<std::pair<std::string, std::string>>& given) {
    try {
      spec.inferShapes(shapes, parseParams(spec, given));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Shape x{1, 8, 4, 4, 4}, f{1, 1, 1, 8, 8};
  CHECK(message({{"x_in", x}, {"filters", f}, {"dy", {1, 8, 4, 4, 5}}}, {}) ==
        "conv3d_bwd: dy has shape [1,8,4,4,5] but stride/padding give [1,8,4,4,4]");
  CHECK(message({{"x_in", x}, {"filters", f}, {"dy", {1, 8, 4, 4, 4}}},
                {{"compute_dx", "false"}, {"compute_dw", "false"}, {"compute_db", "false"}})
            .find("all false") != std::string::npos);
  CHECK(message({{"x_in", x}, {"filters", {1, 1, 1, 4, 8}}, {"dy", {1, 8, 4, 4, 4}}}, {}) ==
        "conv3d_bwd: filters has C_in 4 but x_in has 8 channels");
  CHECK(message({{"x_in", x}, {"filters", f}, {"dy", {1, 8, 4, 4, 4}}}, {{"dw_lead", "-2"}}) ==
        "conv3d_bwd: dw_lead -2 is below 0");
  const ShapeMap outs = spec.inferShapes({{"x_in", x}, {"filters", f}, {"dy", {1, 8, 4, 4, 4}}},
                                         parseParams(spec, {{"compute_dw", "false"}}));
  CHECK(outs.size() == 2);
  CHECK(outs.at("dx") == x);
  CHECK(outs.at("db") == Shape{8});
}

}  // namespace
}  // namespace neuronsim::kernels
