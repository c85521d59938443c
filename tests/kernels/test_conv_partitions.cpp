// Every conv kernel on a machine with 64 partitions (`--set partitions=64`): channel tiles, tap
// packing slots and dw position boxes follow the machine, checked bit for bit against the
// interpreter and against the reference on shapes that cross the 64-channel tile.
#include <doctest/doctest.h>

#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_plan.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::checkConvCase;
using testing::ConvCase;
using testing::corePlanOf;
using testing::trn2Half;

TEST_CASE("conv kernels with 64 partitions: tiles of 64 channels") {
  const KernelSpec fwd = conv3dSpec();
  const ConvCore core = conv3dCore({{"x_in", {1, 100, 3, 4, 5}}, {"filters", {2, 2, 2, 100, 70}}},
                                   parseParams(fwd, {}));
  const ConvPlan plan = planConv(core, Dtype::Fp32, trn2Half().geometry);
  CHECK(plan.parts == 64);
  CHECK(plan.ciTiles == 2);
  CHECK(plan.ciParts == 64);
  CHECK(plan.coGroup == 64);  // whole 64-channel tiles
  // C_in 12 packs 2 kw taps (slots of 32 partitions at 0 and 32), not 4 slots of 16.
  const ConvCore small =
      conv3dCore({{"x_in", {2, 12, 3, 5, 6}}, {"filters", {2, 2, 3, 12, 9}}}, parseParams(fwd, {}));
  const ConvPlan packed = planConv(small, Dtype::Bf16, trn2Half().geometry);
  CHECK(packed.pack == 2);
  CHECK(packed.slotParts == 32);
  CHECK(planConv(small, Dtype::Bf16, testing::trn2().geometry).pack == 4);
}

TEST_CASE("conv3d with 64 partitions: C_in 100, C_out 70, bias, padding; packed C_in 12") {
  const KernelSpec spec = conv3dSpec();
  checkConvCase(spec, {{1, 100, 3, 4, 5}, {2, 2, 2, 100, 70}, 70, {{"padding", "1,0,0,1,1,1"}}},
                trn2Half());
  checkConvCase(spec, {{2, 12, 3, 5, 6}, {2, 2, 3, 12, 9}, 0, {{"stride", "1,1,2"}}, Dtype::Bf16},
                trn2Half());
}

TEST_CASE("conv3d_transpose with 64 partitions: stride 2, C_in 70, C_out 65") {
  checkConvCase(conv3dTransposeSpec(),
                {{1, 70, 2, 3, 4}, {3, 3, 3, 70, 65}, 65, {{"stride", "2"}, {"padding", "1"}}},
                trn2Half());
  // kernel = stride (phase matmuls): 2 phases of C_out 30 on 64 columns, C_in 70 in 2 tiles
  checkConvCase(conv3dTransposeSpec(), {{1, 70, 2, 3, 4}, {2, 2, 2, 70, 30}, 30, {{"stride", "2"}}},
                trn2Half());
}

TEST_CASE("conv3d_bwd with 64 partitions: rows (both dy paths) and boxes, C 70 -> 66") {
  const Shape x{1, 70, 3, 5, 14}, f{3, 3, 2, 70, 66};
  for (const char* method : {"rows", "boxes"})
    for (const char* dy : {"pe", "dma"}) {
      CAPTURE(method);
      CAPTURE(dy);
      checkConvCase(
          conv3dBwdSpec(),
          {x, f, 0, {{"padding", "1"}, {"dw_method", method}, {"dy_transpose", dy}}, Dtype::Bf16},
          trn2Half());
    }
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, {{"padding", "1"}});
  const ConvBwdPlan p = planConvBwd(conv3dBwdCore({{"x_in", x}, {"filters", f}}, params, false),
                                    Dtype::Bf16, trn2Half().geometry, bwdOptions(params));
  REQUIRE(p.dwMethod == DwMethod::Rows);
  CHECK(p.rows.ciTiles == 2);
  CHECK(p.rows.boxH * p.rows.boxW <= 64);
}

/// Trn2's 128 partitions with a 64x64 PE array: channel tiles follow the PE array, not the
/// partitions.
const sim::MachineConfig& trn2SmallPe() {
  static const sim::MachineConfig machine = sim::loadMachine("trn2", {"pe_rows=64", "pe_cols=64"});
  return machine;
}

/// Packed windows of large planes (rolling planes) on 64 partitions: 2 kw slots of 32, which
/// the machine's partition halves (32) split, so the slots cannot copy each other's half plane.
TEST_CASE("conv kernels with 64 partitions: rolling planes, slots in different halves") {
  const KernelSpec fwd = conv3dSpec();
  const ConvCase rolling{{1, 13, 3, 30, 70}, {3, 3, 3, 13, 11}, 0, {{"padding", "1"}}, Dtype::Bf16};
  const ConvPlan plan = corePlanOf(fwd, rolling, trn2Half());
  REQUIRE(plan.rollingPlanes);
  CHECK(plan.pack == 2);
  CHECK(!plan.slotCopies);  // slots 0..31 and 32..63 lie in different halves of 64 partitions
  CHECK(corePlanOf(fwd, rolling, testing::trn2()).slotCopies);
  CHECK(corePlanOf(fwd, rolling, trn2SmallPe()).slotCopies);  // 128 partitions: halves of 64
  for (const Dtype dtype : {Dtype::Bf16, Dtype::Fp32}) {
    CAPTURE(isa::dtypeName(dtype));
    checkConvCase(fwd, {{1, 13, 3, 30, 70}, {3, 3, 3, 13, 11}, 0, {{"padding", "1"}}, dtype},
                  trn2Half());
    checkConvCase(fwd, {{1, 7, 2, 33, 70}, {2, 2, 2, 7, 5}, 0, {{"padding", "0,1,1,0,1,1"}}, dtype},
                  trn2Half());
    checkConvCase(conv3dTransposeSpec(), {{1, 12, 2, 30, 70}, {3, 3, 3, 12, 10}, 0, {}, dtype},
                  trn2Half());
    checkConvCase(conv3dBwdSpec(),
                  {{1, 10, 3, 31, 70}, {3, 3, 3, 10, 12}, 0, {{"padding", "1"}}, dtype},
                  trn2Half());
  }
}

TEST_CASE("conv kernels with a 64x64 PE array on 128 partitions: tiles of 64 channels") {
  const KernelSpec fwd = conv3dSpec();
  const ConvCore core = conv3dCore({{"x_in", {1, 100, 3, 4, 5}}, {"filters", {2, 2, 2, 100, 70}}},
                                   parseParams(fwd, {}));
  CHECK(planConv(core, Dtype::Fp32, trn2SmallPe().geometry).parts == 64);
  CHECK(planConv(core, Dtype::Fp32, testing::trn2().geometry).parts == 128);
  checkConvCase(fwd, {{1, 100, 3, 4, 5}, {2, 2, 2, 100, 70}, 70, {{"padding", "1,0,0,1,1,1"}}},
                trn2SmallPe());
  checkConvCase(conv3dTransposeSpec(), {{1, 70, 2, 3, 3}, {2, 2, 2, 70, 65}, 0, {{"stride", "2"}}},
                trn2SmallPe());
  checkConvCase(conv3dBwdSpec(),
                {{1, 70, 3, 4, 6}, {3, 2, 2, 70, 66}, 0, {{"padding", "1"}}, Dtype::Bf16},
                trn2SmallPe());
}

TEST_CASE("conv3d_bwd with max_moving_free 256: dw passes of 256 C_out columns") {
  const sim::MachineConfig narrow = sim::loadMachine("trn2", {"max_moving_free=256"});
  const Shape x{1, 6, 3, 4, 5}, f{2, 2, 2, 6, 300};
  const KernelSpec spec = conv3dBwdSpec();
  for (const char* method : {"rows", "boxes"}) {
    CAPTURE(method);
    const ParamValues params = parseParams(spec, {{"dw_method", method}});
    const ConvBwdPlan p = planConvBwd(conv3dBwdCore({{"x_in", x}, {"filters", f}}, params, false),
                                      Dtype::Fp32, narrow.geometry, bwdOptions(params));
    CHECK((p.dwMethod == DwMethod::Rows ? p.rows.coWidth : p.boxes.coWidth) == 256);
    checkConvCase(spec, {x, f, 0, {{"dw_method", method}}}, narrow);
  }
}

}  // namespace
}  // namespace neuronsim::kernels
