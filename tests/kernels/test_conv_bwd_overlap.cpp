// conv3d_bwd with dw primed beside dx or emitted between its chunks (OverlappedDw, dw_overlap):
// which shapes take it, and those that do against the reference (interpreter == timed bit for bit,
// no races).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/conv/conv_kernels.h"
#include "kernels/harness/run_kernel.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

/// How dw meets dx in a program (OverlappedDw, dw_overlap).
enum class Schedule {
  Spread,  ///< a dw matmul before dx's last matmul
  Tail,    ///< dw's matmuls after dx's, but a dw load before dx's last matmul
  After,   ///< no dw instruction before dx's last matmul
};

isa::Program buildCase(const ConvCase& c) {
  const KernelSpec spec = conv3dBwdSpec();
  const ParamValues params = parseParams(spec, c.params);
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  for (const auto& [name, shape] : spec.deriveShapes(shapes, params)) shapes.emplace(name, shape);
  return buildKernel(spec, params, checkShapes(spec, shapes, params), c.dtype,
                     testing::trn2().geometry);
}

Schedule scheduleOf(const ConvCase& c) {
  const isa::Program program = buildCase(c);
  int64_t firstDw = -1, firstLoad = -1, lastDx = -1;
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const std::string& note = program.instructions[i].note;
    if (note == "dw matmul" && firstDw < 0) firstDw = static_cast<int64_t>(i);
    if (note == "dw load" && firstLoad < 0) firstLoad = static_cast<int64_t>(i);
    if (note == "matmul") lastDx = static_cast<int64_t>(i);
  }
  REQUIRE(firstDw >= 0);
  REQUIRE(firstLoad >= 0);
  REQUIRE(lastDx >= 0);
  if (firstDw < lastDx) return Schedule::Spread;
  return firstLoad < lastDx ? Schedule::Tail : Schedule::After;
}

/// The share of dx's matmuls emitted after dw's first load (tail: after dw's prime).
double dxShareAfterPrime(const ConvCase& c) {
  const isa::Program program = buildCase(c);
  int64_t before = 0, after = 0;
  bool primed = false;
  for (const isa::Instruction& instruction : program.instructions) {
    primed = primed || instruction.note == "dw load";
    if (instruction.note == "matmul") ++(primed ? after : before);
  }
  REQUIRE(primed);
  return static_cast<double>(after) / static_cast<double>(before + after);
}

void checkOverlapped(const ConvCase& c, Schedule expected) {
  INFO("x_in " << shapeText(c.x) << " filters " << shapeText(c.filters));
  CHECK(scheduleOf(c) == expected);
  testing::checkConvCase(conv3dBwdSpec(), c);
}

TEST_CASE("conv3d_bwd overlap: dw primed beside dx, run after it (tail), odd shapes") {
  // the automatic depth packing (C 32, bf16), all gradients
  checkOverlapped({{1, 32, 12, 16, 32}, {3, 3, 3, 32, 32}, 0, {{"padding", "1"}}, Dtype::Bf16},
                  Schedule::Tail);
  // forced packing: odd extents, C_in 20 -> C_out 24, fp32
  checkOverlapped(
      {{1, 20, 5, 9, 13}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}, {"dw_depth_group", "2"}}},
      Schedule::Tail);
  // dx with 7 PSUM blocks: tail shares no PSUM with dx; x groups forced, no db
  checkOverlapped({{1, 20, 4, 16, 40},
                   {3, 3, 3, 20, 24},
                   0,
                   {{"padding", "1"},
                    {"dw_depth_group", "2"},
                    {"dx_psum_buffers", "7"},
                    {"dw_x_groups", "on"},
                    {"compute_db", "false"}},
                   Dtype::Bf16},
                  Schedule::Tail);
}

TEST_CASE("conv3d_bwd overlap: tail primes dw a share of dx's chunks before its last") {
  // bf16 dx chunks are load-bound: dw's first loads wait for dx's last chunks (4 and 7 chunks:
  // one left); fp32 dx chunks are TensorE-bound and take them early (built only)
  for (const auto& [x, filters] : {std::pair{Shape{1, 32, 8, 32, 32}, Shape{3, 3, 3, 32, 32}},
                                   std::pair{Shape{1, 16, 7, 33, 31}, Shape{3, 3, 3, 16, 16}}}) {
    INFO("x_in " << shapeText(x));
    const double bf16 = dxShareAfterPrime({x, filters, 0, {{"padding", "1"}}, Dtype::Bf16});
    const double fp32 = dxShareAfterPrime({x, filters, 0, {{"padding", "1"}}, Dtype::Fp32});
    CHECK(bf16 > 0);
    CHECK(bf16 < 0.4);
    CHECK(fp32 > 0.6);
  }
}

TEST_CASE("conv3d_bwd overlap: depth-packed dw runs between dx's chunks (spread), odd shapes") {
  // C_out 40 (33..64: dx unpaired), B 2, asymmetric padding, bf16, no db, x groups forced
  checkOverlapped({{2, 16, 4, 8, 8},
                   {3, 3, 3, 16, 40},
                   0,
                   {{"padding", "1,0,1,1,0,1"},
                    {"dw_depth_group", "2"},
                    {"compute_db", "false"},
                    {"dw_overlap", "spread"},
                    {"dw_x_groups", "on"}},
                   Dtype::Bf16},
                  Schedule::Spread);
  // H dilation, a forced lead and one dx PSUM block
  checkOverlapped({{1, 12, 6, 11, 10},
                   {3, 2, 3, 12, 9},
                   0,
                   {{"padding", "1,1,2,2,1,1"},
                    {"dilation", "1,2,1"},
                    {"dw_depth_group", "2"},
                    {"dw_lead", "3"},
                    {"dx_psum_buffers", "1"},
                    {"dw_overlap", "spread"}}},
                  Schedule::Spread);
}

TEST_CASE("conv3d_bwd overlap: shapes that keep dx, then dw") {
  // turned off
  checkOverlapped({{1, 20, 5, 9, 13},
                   {3, 3, 3, 20, 24},
                   0,
                   {{"padding", "1"}, {"dw_depth_group", "2"}, {"dw_overlap", "off"}}},
                  Schedule::After);
  // H stride 2: packed without shared kh rows
  checkOverlapped({{1, 8, 5, 9, 10},
                   {3, 3, 3, 8, 16},
                   0,
                   {{"padding", "1"}, {"stride", "1,2,2"}, {"dw_depth_group", "2"}}},
                  Schedule::After);
  // spread, dx takes 7 PSUM blocks of a bank each (planes of 640 outputs): no room for dw
  checkOverlapped({{1, 20, 4, 16, 40},
                   {3, 3, 3, 20, 24},
                   0,
                   {{"padding", "1"},
                    {"dw_depth_group", "2"},
                    {"dx_psum_buffers", "7"},
                    {"dw_overlap", "spread"}}},
                  Schedule::After);
  // dw's plan beside dx would leave no room for the filters dx stores after its chunk -1 (built
  // only: the benchmark shape is too large to simulate here)
  for (const char* overlap : {"auto", "spread"})
    CHECK(scheduleOf({{1, 32, 16, 64, 64},
                      {3, 3, 3, 32, 32},
                      0,
                      {{"padding", "1"},
                       {"dw_overlap", overlap},
                       {"dw_x_groups", "off"},
                       {"dw_dy_groups", "off"},
                       {"dw_row_pairs", "off"}},
                      Dtype::Bf16}) == Schedule::After);
  // not packed (C 130, two C_in tiles)
  checkOverlapped({{1, 130, 3, 4, 5}, {3, 3, 3, 130, 20}, 0, {{"padding", "1"}}, Dtype::Bf16},
                  Schedule::After);
}

}  // namespace
}  // namespace neuronsim::kernels
