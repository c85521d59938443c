// conv3d_bwd dw_border_engine (DwRowsPlan::borderEngine): the planner's choice, the engine the
// built program zeroes dw's x window borders on, and odd shapes against the reference.
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

DwRowsPlan rowsOf(const ConvCase& c, const sim::MachineConfig& machine = testing::trn2()) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  const ConvCore core = conv3dBwdCore({{"x_in", c.x}, {"filters", c.filters}}, params, false);
  const ConvBwdPlan plan = planConvBwd(core, c.dtype, machine.geometry, bwdOptions(params));
  REQUIRE(plan.dwMethod == DwMethod::Rows);
  return plan.rows;
}

/// The engines running the memsets of dw's loads (the x window borders) in the built program.
std::set<Engine> borderEnginesOf(const ConvCase& c) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  const isa::Program program =
      buildKernel(spec, params, checkShapes(spec, shapesOf(spec, c, params), params), c.dtype,
                  testing::trn2().geometry);
  std::set<Engine> engines;
  for (const isa::Instruction& inst : program.instructions)
    if (inst.note == "dw load" && inst.opcode == isa::Opcode::Memset) engines.insert(inst.engine);
  return engines;
}

ConvCase with(ConvCase c, const std::string& engine) {
  c.params.emplace_back("dw_border_engine", engine);
  return c;
}

TEST_CASE("conv3d_bwd plan: dw borders on VectorE with shared kh taps in bf16 on trn2") {
  const ConvCase c16{{1, 16, 8, 32, 32}, {3, 3, 3, 16, 16}, 0, {{"padding", "1"}}, Dtype::Bf16};
  REQUIRE(rowsOf(c16).shareKh);
  CHECK(rowsOf(c16).borderEngine == Engine::Vector);
  // fp32, and trn1 (no VectorE performance mode): GpSimd
  ConvCase fp32 = c16;
  fp32.dtype = Dtype::Fp32;
  CHECK(rowsOf(fp32).borderEngine == Engine::GpSimd);
  CHECK(rowsOf(c16, trn1()).borderEngine == Engine::GpSimd);
  // C 256 packs no depths, so shares no kh taps: GpSimd
  const ConvCase c256{{1, 256, 4, 8, 8}, {3, 3, 3, 256, 256}, 0, {{"padding", "1"}}, Dtype::Bf16};
  CHECK_FALSE(rowsOf(c256).shareKh);
  CHECK(rowsOf(c256).borderEngine == Engine::GpSimd);
  // forced either way, wherever dw runs by rows
  CHECK(rowsOf(with(c16, "gpsimd")).borderEngine == Engine::GpSimd);
  CHECK(rowsOf(with(fp32, "vector")).borderEngine == Engine::Vector);
  CHECK(rowsOf(with(c256, "vector")).borderEngine == Engine::Vector);
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

}  // namespace
}  // namespace neuronsim::kernels
