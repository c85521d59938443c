// conv3d_transpose against its reference (a direct scatter) on odd shapes, both filter layouts
// and flip settings, interpreter vs timed bit for bit, and its errors.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_transpose_phases.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

void check(const ConvCase& c) {
  testing::checkConvCase(conv3dTransposeSpec(), c);
}

TEST_CASE("conv3d_transpose: stride 2, pre-flipped taps") {
  const ConvCase c{{1, 4, 3, 4, 5}, {3, 2, 2, 4, 6}, 0, {{"stride", "2"}}};
  const ConvPlan p = testing::corePlanOf(conv3dTransposeSpec(), c);
  CHECK(p.dilated);
  CHECK(p.staged);
  CHECK(p.pack == 1);  // no packing with input dilation
  CHECK(p.phase == Int3{2, 2, 2});
  check(c);
}

/// True when `c` runs as phase matmuls (kernel = stride, no padding).
bool phases(const ConvCase& c) {
  const ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  const ParamValues params = parseParams(conv3dTransposeSpec(), c.params);
  return transposePhasesApply(conv3dTransposeCore(shapes, params), testing::trn2().geometry);
}

TEST_CASE("conv3d_transpose: kernel = stride runs as phase matmuls") {
  const std::vector<ConvCase> cases = {
      // Kd phases side by side on the PE columns (C_out 6: 2 per matmul), both flips
      {{1, 4, 3, 4, 5}, {2, 2, 2, 4, 6}, 0, {{"stride", "2"}}},
      {{1, 4, 3, 4, 5},
       {2, 2, 2, 4, 6},
       6,
       {{"stride", "2"}, {"flip_filter_taps_in_kernel", "true"}}},
      // Kd 4: all 4 on the columns (C_out 30), 2 groups of 2 (C_out 50), bf16
      {{1, 8, 3, 2, 3}, {4, 2, 1, 8, 30}, 30, {{"stride", "4,2,1"}}, Dtype::Bf16},
      {{1, 8, 3, 2, 3},
       {4, 1, 3, 8, 50},
       0,
       {{"stride", "4,1,3"}, {"flip_filter_taps_in_kernel", "true"}, {"evict_engine", "vector"}}},
      // C_in 130 and C_out 150 (two tiles each), bias, gelu, odd strides, B 2
      {{2, 130, 3, 5, 7},
       {3, 2, 4, 130, 150},
       150,
       {{"stride", "3,2,4"}, {"activation_fn", "gelu"}}},
      // planes wider than one block (rows of a plane per block, the last one partial), relu
      {{1, 5, 3, 40, 30},
       {2, 2, 2, 5, 7},
       7,
       {{"stride", "2"}, {"activation_fn", "relu"}, {"evict_engine", "scalar"}}},
      {{1, 5, 3, 40, 30}, {2, 2, 2, 5, 7}, 0, {{"stride", "2"}, {"chunk_positions", "1000"}}},
  };
  for (const ConvCase& c : cases) {
    CHECK(phases(c));
    check(c);
  }
  // Padding, output padding, dilation, stride != kernel or C_out-major filters: the core.
  CHECK_FALSE(phases({{1, 4, 3, 4, 5}, {2, 2, 2, 4, 6}, 0, {{"stride", "2"}, {"padding", "1"}}}));
  CHECK_FALSE(
      phases({{1, 4, 3, 4, 5}, {2, 2, 2, 4, 6}, 0, {{"stride", "2"}, {"output_padding", "1"}}}));
  CHECK_FALSE(phases({{1, 4, 3, 4, 5}, {2, 2, 2, 4, 6}, 0, {{"stride", "2,2,1"}}}));
  CHECK_FALSE(phases(
      {{1, 4, 3, 4, 5}, {2, 2, 2, 6, 4}, 0, {{"stride", "2"}, {"filter_shape", "KDHW_CO_CI"}}}));
}

TEST_CASE("conv3d_transpose: stride 2, taps flipped in the kernel") {
  check({{1, 4, 3, 4, 5},
         {3, 2, 3, 4, 6},
         0,
         {{"stride", "2"}, {"flip_filter_taps_in_kernel", "true"}}});
}

TEST_CASE("conv3d_transpose: KDHW_CO_CI filters, stride 1, padding 1") {
  check({{1, 4, 4, 5, 6}, {3, 3, 3, 6, 4}, 0, {{"padding", "1"}, {"filter_shape", "KDHW_CO_CI"}}});
  // quadrant groups: the C_out-major filters are PE-transposed (C_in 24 below the 32-partition
  // slot, so channels past C_in are zeros; both flip settings; odd W)
  for (const char* flip : {"false", "true"}) {
    const ConvCase c{
        {1, 24, 3, 40, 31},
        {3, 3, 3, 20, 24},
        0,
        {{"padding", "1"}, {"filter_shape", "KDHW_CO_CI"}, {"flip_filter_taps_in_kernel", flip}},
        Dtype::Bf16};
    INFO("flip " << flip);
    const ConvPlan p = testing::corePlanOf(conv3dTransposeSpec(), c);
    CHECK(p.pairs == 2);
    CHECK(p.quadrantGroups);
    check(c);
  }
}

TEST_CASE("conv3d_transpose: output_padding") {
  check({{1, 5, 3, 3, 4},
         {3, 3, 3, 5, 7},
         7,
         {{"stride", "2,3,2"}, {"padding", "1"}, {"output_padding", "1,2,0"}}});
}

TEST_CASE("conv3d_transpose: dilation with output_padding below the dilation") {
  check({{1, 3, 4, 4, 4}, {2, 3, 2, 3, 5}, 0, {{"dilation", "2"}, {"output_padding", "1,0,1"}}});
}

TEST_CASE("conv3d_transpose: asymmetric padding") {
  check({{1, 4, 4, 5, 3}, {4, 3, 3, 4, 4}, 0, {{"stride", "2"}, {"padding", "2,0,1,1,0,3"}}});
}

TEST_CASE("conv3d_transpose: padding beyond the dilated filter (cropped input)") {
  check({{1, 3, 5, 4, 6}, {2, 2, 2, 3, 4}, 0, {{"stride", "3"}, {"padding", "2,1,3,0,0,2"}}});
}

TEST_CASE("conv3d_transpose: bf16, C_in 130, flip") {
  check({{1, 130, 2, 3, 3},
         {2, 2, 2, 130, 8},
         0,
         {{"stride", "2"}, {"flip_filter_taps_in_kernel", "true"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d_transpose: C_out 130, bias, relu") {
  check({{1, 6, 2, 3, 3}, {2, 2, 2, 6, 130}, 130, {{"stride", "2"}, {"activation_fn", "relu"}}});
}

TEST_CASE("conv3d_transpose: C_in 1, KDHW_CO_CI, flip") {
  check({{1, 1, 3, 4, 3},
         {3, 3, 2, 5, 1},
         5,
         {{"stride", "2,1,2"},
          {"filter_shape", "KDHW_CO_CI"},
          {"flip_filter_taps_in_kernel", "true"}}});
}

TEST_CASE("conv3d_transpose: B 2, bias, silu") {
  check({{2, 8, 3, 3, 4},
         {3, 3, 3, 8, 12},
         12,
         {{"stride", "2"}, {"padding", "1"}, {"activation_fn", "silu"}}});
}

TEST_CASE("conv3d_transpose: bf16, KDHW_CO_CI, C_out 130, gelu") {
  check({{1, 16, 2, 3, 4},
         {2, 2, 2, 130, 16},
         130,
         {{"stride", "2"}, {"filter_shape", "KDHW_CO_CI"}, {"activation_fn", "gelu"}},
         Dtype::Bf16});
}

TEST_CASE("conv3d_transpose: stride 1, 3x3x3, sigmoid") {
  check({{1, 8, 4, 4, 4}, {3, 3, 3, 8, 8}, 8, {{"activation_fn", "sigmoid"}}});
}

TEST_CASE("conv3d_transpose: stride larger than the kernel (gaps of bias only)") {
  check({{1, 4, 2, 3, 3}, {2, 2, 1, 4, 5}, 5, {{"stride", "4,3,3"}, {"activation_fn", "tanh"}}});
}

/// The forward core of a conv3d_transpose case (what selects the phase path).
ConvCore transposeCore(const ConvCase& c) {
  return conv3dTransposeCore({{"x_in", c.x}, {"filters", c.filters}},
                             parseParams(conv3dTransposeSpec(), c.params));
}

TEST_CASE("conv3d_transpose: output rows wider than one PSUM bank") {
  // kw 3 against stride 2 takes the conv core: rows of 1201 outputs, about 600 per W phase,
  // span several PSUM blocks.
  const ConvCase wide{{1, 2, 1, 2, 600}, {1, 2, 3, 2, 3}, 0, {{"stride", "1,2,2"}}};
  CHECK_FALSE(transposePhasesApply(transposeCore(wide), testing::trn2().geometry));
  const ConvPlan p = testing::corePlanOf(conv3dTransposeSpec(), wide);
  CHECK(p.chunk[2] == 1201);
  CHECK(p.block[2] * p.phase[2] < p.chunk[2]);
  check(wide);
  // kernel = stride: phase matmuls over rows of 600 outputs.
  const ConvCase phases{{1, 2, 1, 2, 300}, {1, 2, 2, 2, 3}, 0, {{"stride", "1,2,2"}}};
  CHECK(transposePhasesApply(transposeCore(phases), testing::trn2().geometry));
  check(phases);
}

TEST_CASE("conv3d_transpose: plane chunked over H, C_in 130 and lnc_shard") {
  // kh 3 against stride 2 takes the conv core; C_in 130 gives two contraction tiles.
  const ConvCase core{{1, 130, 1, 40, 40},
                      {1, 3, 2, 130, 4},
                      0,
                      {{"stride", "1,2,2"}, {"lnc_shard", "true"}, {"activation_fn", "gelu_tanh"}}};
  CHECK_FALSE(transposePhasesApply(transposeCore(core), testing::trn2().geometry));
  const ConvPlan p = testing::corePlanOf(conv3dTransposeSpec(), core);
  CHECK(p.ciTiles == 2);
  CHECK(p.chunk[1] < transposeCore(core).out[1]);
  check(core);
  const ConvCase phases{
      {1, 130, 1, 40, 40},
      {1, 2, 2, 130, 4},
      0,
      {{"stride", "1,2,2"}, {"lnc_shard", "true"}, {"activation_fn", "gelu_tanh"}}};
  CHECK(transposePhasesApply(transposeCore(phases), testing::trn2().geometry));
  check(phases);
}

TEST_CASE(
    "conv3d_transpose: stride 1 with dilation, flip, KDHW_CO_CI, C_in 40 (two taps per matmul)") {
  const ConvCase c{{1, 40, 3, 4, 5},
                   {2, 3, 3, 6, 40},
                   6,
                   {{"dilation", "1,2,2"},
                    {"padding", "1,0,2,1,0,1"},
                    {"filter_shape", "KDHW_CO_CI"},
                    {"flip_filter_taps_in_kernel", "true"}}};
  CHECK(testing::corePlanOf(conv3dTransposeSpec(), c).pack == 2);
  check(c);
}

TEST_CASE("conv3d_transpose: C_in 130 and C_out 130, stride 2, B 2, bias") {
  check({{2, 130, 2, 2, 3},
         {3, 2, 2, 130, 130},
         130,
         {{"stride", "2"}, {"padding", "1,1,0,1,1,0"}, {"output_padding", "1"}}});
}

TEST_CASE("conv3d_transpose: errors name the kernel and the culprit") {
  const KernelSpec spec = conv3dTransposeSpec();
  auto message = [&](const ShapeMap& shapes,
                     const std::vector<std::pair<std::string, std::string>>& given) {
    try {
      spec.inferShapes(shapes, parseParams(spec, given));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const ShapeMap ok{{"x_in", {1, 4, 3, 3, 3}}, {"filters", {2, 2, 2, 4, 6}}};
  CHECK(message(ok, {{"stride", "2"}, {"output_padding", "2"}}).find("output_padding depth") !=
        std::string::npos);
  CHECK(message(ok, {{"stride", "2"}, {"output_padding", "1"}}) == "no error");
  CHECK(message(ok, {{"filter_shape", "KDHW_CO_CI"}}) ==
        "conv3d_transpose: filters has C_in 6 but x_in has 4 channels");
  CHECK(message(ok, {{"padding", "3"}}).find("output depth") != std::string::npos);
  CHECK(message({{"x_in", {1, 4, 3, 3, 3}}, {"filters", {2, 2, 2, 4, 6}}, {"bias", {4}}}, {})
            .find("bias") != std::string::npos);
  CHECK(message(ok, {{"activation_fn", "softmax"}}).find("activation_fn") != std::string::npos);
}

TEST_CASE("conv3d_transpose: output shape follows the formula") {
  const KernelSpec spec = conv3dTransposeSpec();
  const ShapeMap shapes{{"x_in", {2, 4, 3, 5, 7}}, {"filters", {3, 2, 4, 4, 6}}};
  const ParamValues params = parseParams(spec, {{"stride", "2,3,1"},
                                                {"padding", "1,0,0,2,1,1"},
                                                {"dilation", "1,2,3"},
                                                {"output_padding", "1,2,2"}});
  // D: 2*2 + 2 - 1 + 1 + 1 = 7; H: 4*3 + 2 - 2 + 1 + 2 = 15; W: 6*1 + 9 - 2 + 1 + 2 = 16.
  CHECK(spec.inferShapes(shapes, params).at("out") == Shape{2, 6, 7, 15, 16});
}

}  // namespace
}  // namespace neuronsim::kernels
