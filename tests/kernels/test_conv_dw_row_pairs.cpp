// conv3d_bwd dw with row pairs (DwRowsPlan::rowPairs): the planner's choice and odd shapes
// against the reference (interpreter == timed bit for bit, no races).
#include <doctest/doctest.h>

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
using testing::ConvCase;

isa::Program programOf(const ConvCase& c, const sim::MachineConfig& machine) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  const ShapeMap shapes{{"dy", c.x}, {"x_in", c.x}, {"filters", c.filters}};
  return buildKernel(spec, params, checkShapes(spec, shapes, params), c.dtype, machine.geometry);
}

/// Matmuls of a 16-bit stationary (dw's; the depth sums select in fp32).
int64_t bf16Matmuls(const isa::Program& program) {
  int64_t n = 0;
  for (const isa::Instruction& inst : program.instructions)
    n += inst.opcode == isa::Opcode::NcMatmul && inst.srcs.at(0).dtype == Dtype::Bf16;
  return n;
}

ConvCase on(ConvCase c) {
  c.params.emplace_back("dw_row_pairs", "on");
  return c;
}

TEST_CASE("conv3d_bwd plan: dw row pairs where asked for and 4 depth slots share kh rows") {
  const ConvCase c32{{1, 32, 16, 64, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  // auto: 16 box pairs x 8 depth pairs x 128 cycles = kMinRowPairsSaving; 8x64x64 saves half
  CHECK(testing::dwRowsPlanOf(c32).rowPairs);
  const ConvCase half{{1, 32, 8, 64, 64}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(half).rowPairs);
  CHECK(testing::dwRowsPlanOf(on(half)).rowPairs);
  ConvCase off = c32;
  off.params.emplace_back("dw_row_pairs", "off");
  CHECK_FALSE(testing::dwRowsPlanOf(off).rowPairs);
  const DwRowsPlan p = testing::dwRowsPlanOf(on(c32));
  CHECK(p.rowPairs);
  CHECK(p.pairAccs == 10);
  CHECK(p.xtRows == 4);
  CHECK(p.dyTBoxes == 4);
  CHECK(p.accBanks * p.accsPerBank >= 19);
  // C 64 pairs depths (2 slots), Kh 2: not applicable
  const ConvCase c64{{1, 64, 8, 16, 16}, {3, 3, 3, 64, 64}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(on(c64)).rowPairs);
  const ConvCase kh2{{1, 16, 6, 9, 8},
                     {3, 2, 3, 16, 16},
                     0,
                     {{"padding", "1"}, {"dw_depth_group", "2"}},
                     Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(on(kh2)).rowPairs);
  const ConvCase kw2{{1, 16, 6, 9, 8},
                     {3, 3, 2, 16, 16},
                     0,
                     {{"padding", "1"}, {"dw_depth_group", "2"}},
                     Dtype::Bf16};
  CHECK_FALSE(testing::dwRowsPlanOf(on(kw2)).rowPairs);
}

TEST_CASE("conv3d_bwd dw row pairs: odd shapes against the reference") {
  const std::vector<ConvCase> cases = {
      // C 32, bf16, odd D and H, W 13 (9 bands of 2 rows and a short last one), with dx and db
      {{1, 32, 5, 17, 13}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16},
      // C 16 -> 24, fp32, B 2 (pairs restart per batch element), dw only, odd band rows
      {{2, 16, 4, 14, 20}, {3, 3, 3, 16, 24}, 0, {{"padding", "1"}, {"compute_dx", "false"}}},
      // C 8, no padding, bf16: edge depths all read x
      {{1, 8, 6, 20, 30}, {3, 3, 3, 8, 8}, 0, {{"compute_dx", "false"}}, Dtype::Bf16},
      // C 32, asymmetric padding, 2 dy depths
      {{1, 32, 3, 18, 16},
       {3, 3, 3, 32, 32},
       0,
       {{"padding", "0,1,1,0,1,0"}, {"compute_dx", "false"}},
       Dtype::Bf16},
  };
  for (ConvCase c : cases) {
    // packing chooses 2 dy depths (4 slots) only at C 17..32 on large planes; fp32 reuses rows
    c.params.emplace_back("dw_depth_group", "2");
    c.params.emplace_back("dw_row_reuse", "off");
    INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
    CHECK(testing::dwRowsPlanOf(on(c)).rowPairs);
    testing::checkConvCase(conv3dBwdSpec(), on(c));
  }
}

TEST_CASE("conv3d_bwd dw row pairs: 16 matmuls per box pair and depth pair (trn1 too)") {
  // 8 bands of 2 rows (one box pair), dy depths (0, 1) and (2, 3): 2 x 9 matmuls per box and
  // depth pair without pairs; with them 2 x 6 and the edges whose x depth is not padding (2 of 4)
  const ConvCase c{
      {1, 32, 4, 16, 16},
      {3, 3, 3, 32, 32},
      0,
      {{"padding", "1"}, {"dw_depth_group", "2"}, {"compute_dx", "false"}, {"compute_db", "false"}},
      Dtype::Bf16};
  for (const std::string name : {"trn2", "trn1"}) {
    const sim::MachineConfig machine = sim::loadMachine(name);
    INFO(name);
    REQUIRE(testing::dwRowsPlanOf(on(c), machine).rowPairs);
    testing::checkConvCase(conv3dBwdSpec(), on(c), machine);
    CHECK(bf16Matmuls(programOf(c, machine)) == 2 * 2 * 9);
    CHECK(bf16Matmuls(programOf(on(c), machine)) == 2 * (2 * 6 + 2));
  }
}

}  // namespace
}  // namespace neuronsim::kernels
