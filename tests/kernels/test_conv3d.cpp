// conv3d against its reference on odd shapes, interpreter vs timed bit for bit, and its errors.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "kernels/conv/conv_kernels.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

void check(const ConvCase& c) {
  testing::checkConvCase(conv3dSpec(), c);
}

ConvPlan planOf(const ConvCase& c) {
  return testing::corePlanOf(conv3dSpec(), c);
}

TEST_CASE("conv3d: plain 3x3x3, no padding") {
  check({{1, 4, 6, 6, 6}, {3, 3, 3, 4, 8}, 0, {}});
}

TEST_CASE("conv3d: C_in 1, padding, bias, B 2") {
  check({{2, 1, 5, 7, 6}, {3, 2, 3, 1, 5}, 5, {{"padding", "1"}}});
}

TEST_CASE("conv3d: C_in 130 (two contraction tiles), bias, relu") {
  check({{1, 130, 3, 4, 5}, {2, 2, 2, 130, 16}, 16, {{"activation_fn", "relu"}}});
}

TEST_CASE("conv3d: C_out 130 (two output tiles), bias, sigmoid") {
  check({{1, 8, 3, 5, 6},
         {1, 3, 3, 8, 130},
         130,
         {{"padding", "0,0,1,1,1,1"}, {"activation_fn", "sigmoid"}}});
}

TEST_CASE("conv3d: stride larger than the kernel") {
  check({{1, 6, 9, 10, 11}, {2, 2, 2, 6, 7}, 0, {{"stride", "3,3,4"}}});
}

TEST_CASE("conv3d: asymmetric padding per axis") {
  check({{1, 5, 5, 6, 7}, {3, 3, 3, 5, 6}, 0, {{"padding", "0,2,1,0,2,1"}}});
}

TEST_CASE("conv3d: dilation with padding") {
  check({{1, 4, 8, 9, 10}, {3, 2, 3, 4, 8}, 0, {{"dilation", "2,3,2"}, {"padding", "1"}}});
}

TEST_CASE("conv3d: B 3, bias, gelu") {
  check({{3, 6, 4, 5, 6}, {3, 3, 3, 6, 10}, 10, {{"padding", "1"}, {"activation_fn", "gelu"}}});
}

TEST_CASE("conv3d: bf16 with bias and silu") {
  check({{2, 16, 6, 6, 6},
         {3, 3, 3, 16, 32},
         32,
         {{"padding", "1"}, {"activation_fn", "silu"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d: bf16, C_in 130 and C_out 130, tanh") {
  check({{1, 130, 2, 3, 4}, {1, 2, 2, 130, 130}, 0, {{"activation_fn", "tanh"}}, Dtype::Bf16});
}

TEST_CASE("conv3d: 1x1x1 filter with stride 2") {
  check({{1, 32, 4, 8, 40}, {1, 1, 1, 32, 24}, 0, {{"stride", "2"}}});
}

TEST_CASE("conv3d: paired outputs with positions as the stationary") {
  struct Stationary {
    ConvCase c;
    bool positions;
  };
  const std::vector<Stationary> cases = {
      // a row of 150 output pairs: sub-blocks are pieces of one row
      {{{1, 8, 1, 3, 300}, {1, 3, 3, 8, 16}, 0, {{"padding", "0,0,1,1,1,1"}}, Dtype::Bf16}, true},
      // W odd, planes rotating over the four partition quadrants, B 2 (fp32: forced, see below)
      {{{2, 5, 5, 20, 37}, {3, 3, 3, 5, 7}, 0, {{"padding", "1"}, {"stationary", "positions"}}},
       true},
      {{{2, 5, 5, 20, 37}, {3, 3, 3, 5, 7}, 0, {{"padding", "1"}}, Dtype::Bf16}, true},
      // blocks spanning several small planes
      {{{1, 30, 4, 3, 5}, {3, 3, 3, 30, 32}, 0, {{"padding", "1,1,0,2,1,1"}}, Dtype::Bf16}, true},
      // bias and activation: filters unless forced (then evicted in fp32 before the transpose)
      {{{1, 17, 4, 6, 11}, {2, 3, 3, 17, 9}, 9, {{"padding", "1"}, {"activation_fn", "gelu"}}},
       false},
      {{{1, 17, 4, 6, 11},
        {2, 3, 3, 17, 9},
        9,
        {{"padding", "1"}, {"activation_fn", "gelu"}, {"stationary", "positions"}},
        Dtype::Bf16},
       true},
      {{{2, 5, 5, 20, 37}, {3, 3, 3, 5, 7}, 0, {{"padding", "1"}, {"stationary", "filters"}}},
       false},
  };
  for (const Stationary& s : cases) {
    INFO("x_in " << shapeText(s.c.x) << " filters " << shapeText(s.c.filters));
    const ConvPlan plan = planOf(s.c);
    CHECK(plan.pairs == 2);
    CHECK(plan.positionsStationary == s.positions);
    check(s.c);
  }
  // auto in fp32: on trn2 a 128-column fp32 stationary loads in 512 PE cycles (ls_speedup_fp32
  // 1), as long as a matmul of 128 pairs with filters as the stationary: filters; on trn1 it
  // loads in 128 behind a 256-cycle matmul: positions
  const ConvCase fp32{{2, 5, 5, 20, 37}, {3, 3, 3, 5, 7}, 0, {{"padding", "1"}}};
  CHECK_FALSE(planOf(fp32).positionsStationary);
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(testing::corePlanOf(conv3dSpec(), fp32, trn1).positionsStationary);
  check(fp32);
  const ConvCase unpaired{{1, 48, 3, 5, 9}, {3, 3, 3, 48, 40}, 0, {{"stationary", "positions"}}};
  CHECK_THROWS_WITH(planOf(unpaired),
                    doctest::Contains("conv3d: stationary positions needs paired W outputs"));
}

TEST_CASE("conv3d: positions as the stationary with blocks grouped over partition quadrants") {
  struct Grouped {
    ConvCase c;
    bool groups;
  };
  const std::vector<Grouped> cases = {
      // 8 pairs a row: blocks of 64 rows and one of 6 (a group of 2 blocks, then one of 1);
      // C_out 32 fills the quadrants (one store per group)
      {{{1, 32, 2, 70, 16}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16}, true},
      // W odd (the last pair has no odd output), relu without bias: fp32 sub-block results
      {{{1, 32, 3, 40, 45},
        {3, 3, 3, 32, 32},
        0,
        {{"padding", "1"}, {"activation_fn", "relu"}, {"stationary", "positions"}}},
       true},
      // C_out 5: one store per quadrant; two batches; H padding only on one side
      {{{2, 3, 3, 50, 24}, {2, 3, 3, 3, 5}, 0, {{"padding", "1,0,0,1,1,1"}}, Dtype::Bf16}, true},
      // bias: no groups (the bias sits on C_out's partitions only)
      {{{1, 32, 2, 70, 16}, {3, 3, 3, 32, 32}, 32, {{"padding", "1"}, {"stationary", "positions"}}},
       false},
  };
  for (const Grouped& g : cases) {
    INFO("x_in " << shapeText(g.c.x) << " filters " << shapeText(g.c.filters));
    const ConvPlan plan = planOf(g.c);
    CHECK(plan.positionsStationary);
    CHECK(plan.quadrantGroups == g.groups);
    check(g.c);
  }
}

TEST_CASE("conv3d: C_out 33..64 pairs W outputs by positions, one block per partition half") {
  const std::vector<ConvCase> cases = {
      // C_out 64 fills the halves: one store per group of 2 blocks; 3 blocks per plane
      {{1, 32, 3, 40, 24}, {3, 3, 3, 32, 64}, 0, {{"padding", "1"}}, Dtype::Bf16},
      // C_out 33, W odd, B 2, relu without bias (fp32 sub-block results)
      {{2, 7, 3, 40, 13},
       {3, 3, 3, 7, 33},
       0,
       {{"padding", "1"}, {"activation_fn", "relu"}, {"stationary", "positions"}}},
      // C_out 50, C_in 20, 2x3 taps, asymmetric padding, a partial group per plane
      {{1, 20, 4, 50, 10}, {2, 2, 3, 20, 50}, 0, {{"padding", "0,1,1,0,2,1"}}, Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ConvPlan plan = planOf(c);
    CHECK(plan.pairs == 2);
    CHECK(plan.pairStride == c.filters[4]);
    CHECK(plan.positionsStationary);
    CHECK(plan.quadrantGroups);
    CHECK(plan.groupParts == 64);
    check(c);
  }
  // blocks spanning several planes (no quadrant groups): C_out 40 is not paired
  const ConvCase spanning{{1, 8, 6, 3, 4}, {3, 3, 3, 8, 40}, 0, {{"padding", "1"}}};
  CHECK(planOf(spanning).pairs == 1);
  check(spanning);
}

TEST_CASE("conv3d: packed windows of large planes roll through a ring of input planes") {
  const std::vector<ConvCase> cases = {
      // two batches: the ring restarts; C_out 40 keeps the filters stationary
      {{2, 8, 3, 33, 70}, {3, 3, 3, 8, 40}, 0, {{"padding", "1,1,0,0,1,1"}}},
      // depth dilation 2 and padding: rings of 6 planes, zero planes in the padding
      {{1, 16, 5, 32, 64},
       {2, 3, 3, 16, 16},
       16,
       {{"padding", "1"}, {"dilation", "2,1,1"}},
       Dtype::Bf16},
      // W dilation 2: slot pairs 2 columns apart; odd C_in and W, asymmetric W padding
      {{1, 5, 3, 45, 51},
       {3, 2, 3, 5, 7},
       0,
       {{"padding", "1,1,0,1,2,0"}, {"dilation", "1,1,2"}, {"slot_copies", "on"}}},
      // every slot loads its whole plane
      {{1, 8, 3, 33, 70},
       {3, 3, 3, 8, 24},
       0,
       {{"padding", "1"}, {"slot_copies", "off"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    const ConvPlan plan = planOf(c);
    CHECK(plan.pack == 4);
    CHECK(plan.rollingPlanes);
    // fp32 with filters as the stationary (C_out 40 pairs W by positions): two output planes
    // per chunk (plane pairs)
    CHECK(plan.planePairs == (c.dtype == Dtype::Fp32 && !plan.positionsStationary));
    CHECK(plan.chunk[0] == (plan.planePairs ? 2 : 1));
    // slot pairs of one partition half share each plane's load (VectorE copies the rest): on,
    // or auto with bf16 matmuls
    const bool on = c.params.back() == std::pair<std::string, std::string>{"slot_copies", "on"};
    const bool off = c.params.back().second == "off";
    CHECK(plan.slotCopies == (on || (!off && c.dtype == Dtype::Bf16)));
    check(c);
  }
}

TEST_CASE("conv3d: output rows wider than one PSUM bank") {
  const ConvCase c{{1, 3, 1, 2, 1200}, {1, 1, 3, 3, 4}, 4, {}};
  const ConvPlan p = planOf(c);
  CHECK(p.chunk[2] == 1198);
  CHECK(p.pairs == 2);
  CHECK(p.block[2] == 512);  // a row's 599 output pairs take two blocks
  check(c);
}

TEST_CASE("conv3d: plane chunked over H with a partial chunk") {
  const ConvCase c{{1, 4, 2, 100, 100}, {2, 3, 3, 4, 4}, 0, {{"padding", "0,0,0,1,1,0"}}};
  const ConvPlan p = planOf(c);
  CHECK(p.chunk[0] == 1);
  CHECK(p.chunk[1] < 99);
  CHECK(99 % p.chunk[1] != 0);  // the last chunk is partial
  check(c);
}

TEST_CASE("conv3d: mixed stride, padding, dilation, gelu_tanh") {
  check({{2, 3, 7, 8, 9},
         {2, 3, 2, 3, 5},
         5,
         {{"stride", "2,1,2"},
          {"padding", "1,0,0,2,1,1"},
          {"dilation", "1,2,2"},
          {"activation_fn", "gelu_tanh"}}});
}

TEST_CASE("conv3d: padding wider than the input (taps that meet only zeros)") {
  check({{1, 2, 2, 2, 2}, {3, 3, 3, 2, 3}, 3, {{"padding", "2"}}});
}

TEST_CASE("conv3d: single output position") {
  check({{1, 5, 3, 3, 3}, {3, 3, 3, 5, 7}, 0, {}});
}

TEST_CASE("conv3d: filters too large for SBUF at once (C_out groups)") {
  const ConvCase c{{1, 256, 5, 5, 5}, {5, 5, 5, 256, 200}, 200, {}};
  CHECK(planOf(c).coGroup < 200);
  check(c);
}

TEST_CASE("conv3d: bf16 relu on a wide plane") {
  check({{1, 8, 3, 20, 30},
         {3, 3, 3, 8, 16},
         16,
         {{"padding", "1"}, {"activation_fn", "relu"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d: dilation too wide for a dense window (per-tap columns), C_in 130, bias") {
  const ConvCase c{{1, 130, 1, 130, 130},
                   {1, 3, 3, 130, 4},
                   4,
                   {{"dilation", "1,60,60"}, {"padding", "0,0,1,2,3,0"}}};
  CHECK(planOf(c).perTap);
  check(c);
}

TEST_CASE("conv3d: per-tap columns with stride, bf16, B 2") {
  CHECK(planOf({{2, 3, 3, 181, 400},
                {2, 2, 3, 3, 5},
                0,
                {{"dilation", "1,150,190"}, {"stride", "1,7,5"}, {"padding", "1"}},
                Dtype::Bf16})
            .perTap);
  check({{2, 3, 3, 181, 400},
         {2, 2, 3, 3, 5},
         0,
         {{"dilation", "1,150,190"},
          {"stride", "1,7,5"},
          {"padding", "1"},
          {"activation_fn", "relu"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d: C_in 64, 1x1x2 filter, bf16 (two taps per matmul)") {
  ConvCase c{{1, 64, 3, 5, 9},
             {1, 1, 2, 64, 20},
             20,
             {{"stride", "1,1,2"}, {"dilation", "1,1,3"}, {"padding", "0,0,0,0,2,1"}},
             Dtype::Bf16};
  const ConvPlan p = planOf(c);
  CHECK(p.pack == 2);
  CHECK(p.tapColumns == 1);
  check(c);
}

TEST_CASE(
    "conv3d: two W-neighbour outputs per packed matmul, C_in 3, 17, 32; C_out 48 by positions") {
  struct Paired {
    ConvCase c;
    int64_t pairs, pairStride;
  };
  const std::vector<Paired> cases = {
      {{{2, 3, 4, 7, 9}, {3, 3, 3, 3, 5}, 5, {{"padding", "1,0,2,1,0,1"}}}, 2, 32},
      {{{1, 17, 5, 6, 11},
        {2, 3, 3, 17, 17},
        0,
        {{"padding", "0,1,1,0,2,1"}, {"stride", "2,2,1"}},
        Dtype::Bf16},
       2,
       32},
      {{{1, 32, 3, 10, 12}, {3, 3, 3, 32, 32}, 32, {{"padding", "1"}, {"activation_fn", "relu"}}},
       2,
       32},
      // C_out 48: filters stationary would put the odd block a half away from the outputs (A1);
      // positions as the stationary transposes each offset on its own, offsets 48 columns apart
      // (blocks of one plane: planes of at least 256 pairs)
      {{{1, 16, 3, 60, 9}, {1, 2, 3, 16, 48}, 0, {{"padding", "0,0,1,0,1,2"}}, Dtype::Bf16}, 2, 48},
      {{{1, 16, 3, 5, 9}, {1, 2, 3, 16, 48}, 0, {{"padding", "0,0,1,0,1,2"}}, Dtype::Bf16}, 1, 0},
      {{{1, 16, 3, 60, 9},
        {1, 2, 3, 16, 48},
        0,
        {{"padding", "0,0,1,0,1,2"}, {"stationary", "filters"}},
        Dtype::Bf16},
       1,
       0},
      {{{1, 16, 3, 60, 9}, {1, 2, 3, 16, 48}, 48, {{"padding", "0,0,1,0,1,2"}}}, 1, 0},
      {{{1, 48, 3, 5, 9}, {3, 3, 3, 48, 40}, 0, {{"padding", "1"}}}, 1, 0},
      {{{1, 8, 3, 6, 11}, {3, 3, 3, 8, 16}, 0, {{"padding", "1"}, {"stride", "1,1,2"}}}, 1, 0},
      {{{1, 8, 3, 6, 11}, {3, 3, 3, 8, 80}, 0, {{"padding", "1"}}}, 1, 0},
  };
  for (const Paired& p : cases) {
    INFO("x_in " << shapeText(p.c.x) << " filters " << shapeText(p.c.filters));
    const ConvPlan plan = planOf(p.c);
    CHECK(plan.pairs == p.pairs);
    CHECK(plan.pairStride == p.pairStride);
    check(p.c);
  }
  ConvCase off = cases[2].c;
  off.params.emplace_back("w_pairs", "off");
  CHECK(planOf(off).pairs == 1);
  CHECK(planOf(off).pack == 4);
  check(off);
}

TEST_CASE("conv3d: schedule options are taken (plan) and keep the result bit-exact") {
  ConvCase c{
      {1, 8, 3, 20, 30}, {3, 3, 3, 8, 16}, 16, {{"padding", "1"}, {"activation_fn", "relu"}}};
  CHECK(planOf(c).pack == 4);
  CHECK(planOf(c).psumBuffers == 4);
  c.params.insert(c.params.end(), {{"tap_pack", "off"},
                                   {"chunk_positions", "100"},
                                   {"psum_buffers", "2"},
                                   {"evict_engine", "scalar"}});
  const ConvPlan p = planOf(c);
  CHECK(p.pack == 1);
  CHECK(p.chunk[0] * p.chunk[1] * p.chunk[2] <= 100);
  CHECK(p.psumBuffers == 2);
  CHECK(p.evictEngines == std::vector<isa::Engine>{isa::Engine::Scalar});
  check(c);
  c.params.back().second = "vector";
  check(c);
}

TEST_CASE("conv3d: psum_buffers counts the PSUM of positions as the stationary") {
  // Blocks of 16 rows x 32 pairs fill a bank each: 8 leave none for the sub-block results.
  const ConvCase full{{1, 32, 2, 40, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  auto with = [&](const std::vector<std::pair<std::string, std::string>>& extra) {
    ConvCase c = full;
    c.params.insert(c.params.end(), extra.begin(), extra.end());
    return c;
  };
  CHECK(planOf(full).positionsStationary);
  CHECK(planOf(full).block[1] * planOf(full).block[2] == 512);
  CHECK_THROWS_WITH_AS(planOf(with({{"psum_buffers", "8"}})),
                       "conv3d: psum_buffers 8 leaves no PSUM room for the 8 sub-block results "
                       "of positions as the stationary (at most 7 here)",
                       Error);
  CHECK(planOf(with({{"psum_buffers", "7"}})).psumBuffers == 7);
  check(with({{"psum_buffers", "7"}}));
  // Filters as the stationary: all 8 banks accumulate.
  CHECK(planOf(with({{"psum_buffers", "8"}, {"stationary", "filters"}})).psumBuffers == 8);
  // Small blocks share banks: 8 of them and the sub-block results fit.
  const ConvCase small{
      {1, 8, 3, 5, 9}, {3, 3, 3, 8, 16}, 0, {{"padding", "1"}, {"psum_buffers", "8"}}, Dtype::Bf16};
  CHECK(planOf(small).positionsStationary);
  CHECK(planOf(small).psumBuffers == 8);
  check(small);
}

TEST_CASE("conv3d: errors name the kernel and the culprit") {
  const KernelSpec spec = conv3dSpec();
  const ParamValues none = parseParams(spec, {});
  auto message = [&](const ShapeMap& shapes, const ParamValues& params) {
    try {
      spec.inferShapes(shapes, params);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({{"x_in", {1, 4, 5, 5, 5}}, {"filters", {3, 3, 3, 8, 2}}}, none) ==
        "conv3d: filters has C_in 8 but x_in has 4 channels");
  CHECK(message({{"x_in", {1, 4, 5, 5, 5}}, {"filters", {3, 3, 3, 4, 2}}, {"bias", {3}}}, none)
            .find("bias") != std::string::npos);
  CHECK(message({{"x_in", {1, 4, 2, 5, 5}}, {"filters", {3, 3, 3, 4, 2}}}, none).find("depth") !=
        std::string::npos);
  CHECK(message({{"x_in", {1, 4, 5, 5}}, {"filters", {3, 3, 3, 4, 2}}}, none).find("x_in") !=
        std::string::npos);
  const ParamValues zeroStride = parseParams(spec, {{"stride", "1,0,1"}});
  CHECK(message({{"x_in", {1, 4, 5, 5, 5}}, {"filters", {3, 3, 3, 4, 2}}}, zeroStride)
            .find("stride height") != std::string::npos);
  const ParamValues negative = parseParams(spec, {{"padding", "0,0,0,0,-1,0"}});
  CHECK(message({{"x_in", {1, 4, 5, 5, 5}}, {"filters", {3, 3, 3, 4, 2}}}, negative)
            .find("padding width") != std::string::npos);
}

}  // namespace
}  // namespace neuronsim::kernels
