// matmul's, the pooling kernels' and the conv kernels' schedule parameters (the conv core's,
// conv3d_transpose's kernel = stride and conv3d_bwd's dw ones): declared as schedule knobs
// (listed by run --help, swept by neuronsim sweep), every sweep candidate gives the reference
// result, and values out of range are one-line errors.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "kernel_check.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_transpose_phases.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/pooling/pooling_schedule.h"
#include "test_conv_check.h"
#include "test_pooling_check.h"

using neuronsim::isa::Dtype;
using namespace neuronsim::kernels;

namespace {

/// The names of `kernel`'s parameters marked schedule.
std::set<std::string> scheduleNames(const std::string& kernel) {
  std::set<std::string> names;
  for (const ParamSpec* p : scheduleParams(findKernel(kernel))) names.insert(p->name);
  return names;
}

/// Every schedule parameter of `kernel` defaults to auto and declares sweep candidates led by
/// auto; the others are not schedule parameters.
void checkDeclared(const std::string& kernel, const std::set<std::string>& expected) {
  CAPTURE(kernel);
  CHECK(scheduleNames(kernel) == expected);
  for (const ParamSpec& p : findKernel(kernel).params) {
    CAPTURE(p.name);
    CHECK(p.schedule == (expected.count(p.name) == 1));
    if (!p.schedule) continue;
    CHECK(p.defaultValue == kAuto);
    const std::vector<std::string> candidates = sweepCandidates(p);
    REQUIRE(candidates.size() >= 2);
    CHECK(candidates[0] == kAuto);
  }
}

/// Each non-auto sweep candidate of each schedule parameter, one at a time.
std::vector<std::pair<std::string, std::string>> candidateSettings(const std::string& kernel) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const ParamSpec* p : scheduleParams(findKernel(kernel)))
    for (const std::string& value : sweepCandidates(*p))
      if (value != kAuto) settings.emplace_back(p->name, value);
  return settings;
}

const std::set<std::string> kPoolKnobs = {"buffers", "chunks", "load_queues", "store_queues",
                                          "layout"};

const std::set<std::string> kConvKnobs = {"chunk_positions", "psum_buffers",      "tap_pack",
                                          "evict_engine",    "w_pairs",           "stationary",
                                          "slot_copies",     "slot_copy_engines", "plane_pairs"};

}  // namespace

TEST_CASE("schedule knobs: matmul and the pooling kernels declare theirs") {
  checkDeclared("matmul",
                {"mode",         "block_m",       "block_n",      "n_tile",      "k_chunk",
                 "load_buffers", "load_chunks",   "psum_buffers", "out_buffers", "load_queues",
                 "store_queues", "store_engines", "store_tiles",  "rhs_engine",  "side_engine",
                 "k_tail_delay", "ramp_chunks",   "evict",        "m_tail",      "m_tail_tiles"});
  std::set<std::string> forward = kPoolKnobs, maxBackward = kPoolKnobs;
  forward.insert("acc_engines");
  maxBackward.insert({"gpsimd_share", "key_ring"});
  checkDeclared("avg_pooling_3d", forward);
  checkDeclared("max_pooling_3d", forward);
  checkDeclared("avg_pooling_3d_backward", kPoolKnobs);
  checkDeclared("max_pooling_3d_backward", maxBackward);
}

TEST_CASE("schedule knobs: every matmul candidate gives the reference result") {
  // Kblocked-only knobs run in mode kblocked, so that they shape the program.
  const std::set<std::string> kblocked = {"block_m", "block_n", "k_chunk", "ramp_chunks"};
  uint64_t seed = 300;
  for (const auto& [name, value] : candidateSettings("matmul")) {
    std::vector<std::pair<std::string, std::string>> params = {{name, value}};
    if (kblocked.count(name) == 1) params.push_back({"mode", "kblocked"});
    // Odd K, M and N tails (K 4 tiles + 8 rows, M 1 tile + 8 rows, N 1 tile + 88 columns).
    testing::checkKernelCase({"matmul",
                              {{"lhsT", {520, 136}}, {"rhs", {520, 600}}},
                              params,
                              ++seed % 2 == 0 ? Dtype::Fp32 : Dtype::Bf16,
                              seed});
  }
}

TEST_CASE("schedule knobs: every pooling candidate gives the reference result") {
  using pooling_testing::checkPoolCase;
  using pooling_testing::PoolCase;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  // Overlapping windows on few planes (halo slabs apply: max backward's H unpadded), and
  // disjoint ones.
  const std::vector<PoolCase> bases = {
      {"k3 s2 p(1,0,1) B*C=6",
       {2, 3, 9, 10, 7},
       {{"kernel_size", "3"}, {"stride", "2"}, {"padding", "1,0,1"}}},
      {"k2 B*C=5", {1, 5, 8, 6, 10}, {{"kernel_size", "2"}}},
  };
  uint64_t seed = 400;
  for (const char* kernel :
       {"avg_pooling_3d", "max_pooling_3d", "avg_pooling_3d_backward", "max_pooling_3d_backward"})
    for (const auto& [name, value] : candidateSettings(kernel))
      for (PoolCase c : bases) {
        c.params.push_back({name, value});
        c.label += " " + name + "=" + value;
        checkPoolCase(kernel, c, Dtype::Fp32, machine, ++seed);
      }
}

TEST_CASE("schedule knobs: pooling values out of range are one-line errors") {
  const KernelSpec& spec = findKernel("max_pooling_3d_backward");
  const auto build = [&](const std::string& name, const std::string& value) {
    const ParamValues params = parseParams(spec, {{name, value}});
    buildKernel(spec, params,
                checkShapes(spec,
                            {{"input_tensor", {1, 2, 4, 4, 4}},
                             {"grad_output", {1, 2, 2, 2, 2}},
                             {"output_tensor", {1, 2, 2, 2, 2}}},
                            params),
                Dtype::Fp32, neuronsim::isa::Geometry{});
  };
  CHECK_THROWS_WITH_AS(build("buffers", "5"), "max_pooling_3d_backward: buffers 5 is not in 1..4",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("gpsimd_share", "101"),
                       "max_pooling_3d_backward: gpsimd_share 101 is not in 0..100",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("store_queues", "0"),
                       "max_pooling_3d_backward: store_queues 0 is below 1", neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("load_queues", "9"),
                       "max_pooling_3d_backward: load_queues 9 is not in 1..8 (8: loads and "
                       "stores each get half of the machine's DMA queues)",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"key_ring", "many"}}),
                       "max_pooling_3d_backward: parameter key_ring takes integers or auto, not "
                       "'many'",
                       neuronsim::Error);
  CHECK_THROWS_AS(parseParams(spec, {{"layout", "rows"}}), neuronsim::Error);
}

TEST_CASE("schedule knobs: forward pooling's automatic accumulator chains") {
  using neuronsim::isa::Engine;
  const std::vector<Engine> one = {Engine::Vector, Engine::GpSimd};
  const std::vector<Engine> three = {Engine::Vector, Engine::Vector, Engine::GpSimd};
  CHECK(forwardAccEngines(8, 1) == one);  // few taps: one chain per engine whatever the box
  CHECK(forwardAccEngines(1, 1) == one);
  CHECK(forwardAccEngines(27, 512) == one);  // large boxes hide a chain's wait
  CHECK(forwardAccEngines(27, 511) == three);
  CHECK(forwardAccEngines(9, 125) == three);
  // The rule as the kernel applies it: the acc tiles of buffer set 0 show the chains.
  const auto machine = neuronsim::sim::loadMachine("trn2");
  const auto accTiles = [&](const neuronsim::kernels::Shape& input, const std::string& k,
                            const std::string& s, const std::string& p) {
    const pooling_testing::PoolCase c{
        "chains", input, {{"kernel_size", k}, {"stride", s}, {"padding", p}}};
    int count = 0;
    for (const auto& a :
         pooling_testing::poolAllocations("max_pooling_3d", c, Dtype::Fp32, machine))
      count += a.name.rfind("acc0_", 0) == 0 ? 1 : 0;
    return count;
  };
  CHECK(accTiles({1, 128, 9, 9, 9}, "3", "2", "1") == 3);
  CHECK(accTiles({2, 64, 16, 32, 32}, "2", "2", "0") == 2);
}

TEST_CASE("schedule knobs: the conv kernels declare theirs") {
  checkDeclared("conv3d", kConvKnobs);
  std::set<std::string> transpose = kConvKnobs;
  transpose.insert({"first_store_positions", "x_loads", "store_ramp", "out_layout"});
  checkDeclared("conv3d_transpose", transpose);
  std::set<std::string> dx;
  for (const char* knob : {"chunk_positions", "psum_buffers", "w_pairs", "stationary",
                           "slot_copies", "slot_copy_engines", "plane_pairs"})
    dx.insert(std::string("dx_") + knob);
  std::set<std::string> bwd;  // the dw knobs are dw's, not the conv core's
  for (const std::string& name : scheduleNames("conv3d_bwd"))
    if (name.rfind("dx_", 0) == 0) bwd.insert(name);
  CHECK(bwd == dx);
}

TEST_CASE("schedule knobs: every conv candidate gives the reference result") {
  using neuronsim::kernels::testing::checkConvCase;
  using neuronsim::kernels::testing::ConvCase;
  // C_in 8 on planes of 2310 outputs: packed kw slots, paired outputs, positions as the
  // stationary, rolling planes with slot copies; C_in 5 with bias on small planes: filters as the
  // stationary; C_in 70: unpacked (no pairs, so stationary positions is an error there)
  const std::vector<ConvCase> forward = {
      {{1, 8, 3, 33, 70}, {3, 3, 3, 8, 24}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{1, 5, 4, 9, 11}, {2, 3, 3, 5, 7}, 7, {{"padding", "1,0,1"}}},
      {{1, 70, 2, 5, 6}, {2, 2, 3, 70, 20}, 20, {{"padding", "0,1,1"}}},
  };
  for (const auto& [name, value] : candidateSettings("conv3d"))
    for (ConvCase c : forward) {
      if (c.x[1] > 64 && value == "positions") continue;
      INFO(name << "=" << value);
      c.params.push_back({name, value});
      checkConvCase(findKernel("conv3d"), c);
    }
  // dx of C 8 on planes of 2048 outputs (dw off: its knobs are not the conv core's)
  for (const auto& [name, value] : candidateSettings("conv3d_bwd")) {
    if (name.rfind("dx_", 0) != 0) continue;
    INFO(name << "=" << value);
    checkConvCase(findKernel("conv3d_bwd"),
                  {{1, 8, 3, 32, 64},
                   {3, 3, 3, 8, 8},
                   0,
                   {{"padding", "1"}, {"compute_dw", "false"}, {name, value}},
                   Dtype::Bf16});
  }
}

TEST_CASE("schedule knobs: conv values out of range are one-line errors") {
  const auto build = [](const std::string& kernel, const std::string& name,
                        const std::string& value) {
    const KernelSpec& spec = findKernel(kernel);
    const ParamValues params = parseParams(spec, {{"padding", "1"}, {name, value}});
    ShapeMap shapes{{"x_in", {1, 8, 3, 6, 7}}, {"filters", {3, 3, 3, 8, 8}}};
    if (kernel == "conv3d_bwd") shapes["dy"] = {1, 8, 3, 6, 7};
    buildKernel(spec, params, checkShapes(spec, shapes, params), Dtype::Fp32,
                neuronsim::isa::Geometry{});
  };
  CHECK_THROWS_WITH_AS(build("conv3d", "chunk_positions", "0"),
                       "conv3d: chunk_positions 0 is below 1", neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("conv3d", "psum_buffers", "9"),
                       "conv3d: psum_buffers 9 is not in 1..8 (8: the machine's PSUM banks)",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("conv3d_transpose", "psum_buffers", "-2"),
                       "conv3d_transpose: psum_buffers -2 is below 1", neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("conv3d_bwd", "dx_chunk_positions", "0"),
                       "conv3d_bwd: dx_chunk_positions 0 is below 1", neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("conv3d_bwd", "dx_psum_buffers", "9"),
                       "conv3d_bwd: dx_psum_buffers 9 is not in 1..8 (8: the machine's PSUM banks)",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(parseParams(findKernel("conv3d"), {{"psum_buffers", "many"}}),
                       "conv3d: parameter psum_buffers takes integers or auto, not 'many'",
                       neuronsim::Error);
  CHECK_THROWS_AS(parseParams(findKernel("conv3d"), {{"slot_copies", "both"}}), neuronsim::Error);
}

namespace {

const std::set<std::string> kDwKnobs = {
    "dw_method",      "dw_acc_banks",     "dy_transpose", "dw_stationary", "dw_depth_group",
    "dw_overlap",     "dw_x_groups",      "dw_dy_groups", "dw_lead",       "dw_row_reuse",
    "dw_depth_pairs", "dw_border_engine", "dw_dy_loads",  "dw_row_pairs"};

}  // namespace

TEST_CASE("schedule knobs: conv3d_bwd declares its dw knobs") {
  const KernelSpec& spec = findKernel("conv3d_bwd");
  std::set<std::string> declared;
  for (const ParamSpec* p : scheduleParams(spec))
    if (p->name.starts_with("dw_") || p->name == "dy_transpose") declared.insert(p->name);
  CHECK(declared == kDwKnobs);
  for (const ParamSpec& p : spec.params) {
    if (kDwKnobs.count(p.name) == 0) continue;
    CAPTURE(p.name);
    CHECK(p.defaultValue == kAuto);
    const std::vector<std::string> candidates = sweepCandidates(p);
    REQUIRE(candidates.size() >= 2);  // dw_dy_groups: auto and off
    CHECK(candidates[0] == kAuto);
  }
}

TEST_CASE("schedule knobs: every conv3d_bwd dw candidate gives the reference result") {
  using neuronsim::kernels::testing::ConvCase;
  const KernelSpec& spec = findKernel("conv3d_bwd");
  // depth-packed small channels with dx (overlap, x and dy groups, db on GpSimd): H 9 in 3
  // bands of 3 rows; and an unpacked odd shape (stride 2 along H, B 2, C_in 3, fp32)
  const std::vector<ConvCase> bases = {
      {{1, 20, 5, 9, 13}, {3, 3, 3, 20, 24}, 0, {{"padding", "1"}}, Dtype::Bf16},
      {{2, 3, 6, 7, 6}, {3, 2, 3, 3, 5}, 0, {{"padding", "1"}, {"stride", "1,2,1"}}},
  };
  for (const auto& [name, value] : candidateSettings("conv3d_bwd")) {
    if (kDwKnobs.count(name) == 0) continue;
    for (size_t b = 0; b < bases.size(); ++b) {
      ConvCase c = bases[b];
      c.params.emplace_back(name, value);
      // the first base packs dy depths unless the knob under test decides that
      if (b == 0 && name != "dw_depth_group" && name != "dw_stationary")
        c.params.emplace_back("dw_depth_group", "2");
      INFO(name << " = " << value << ", base " << b);
      neuronsim::kernels::testing::checkConvCase(spec, c);
    }
  }
}

TEST_CASE("schedule knobs: conv3d_bwd dw values out of range are one-line errors") {
  const KernelSpec& spec = findKernel("conv3d_bwd");
  const ShapeMap shapes = {
      {"x_in", {1, 8, 4, 4, 4}}, {"filters", {1, 1, 1, 8, 8}}, {"dy", {1, 8, 4, 4, 4}}};
  const auto build = [&](const std::string& name, const std::string& value) {
    const ParamValues params = parseParams(spec, {{name, value}});
    buildKernel(spec, params, checkShapes(spec, shapes, params), Dtype::Fp32,
                neuronsim::isa::Geometry{});
  };
  CHECK_THROWS_WITH_AS(build("dw_acc_banks", "0"), "conv3d_bwd: dw_acc_banks 0 is below 1",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("dw_acc_banks", "7"),
                       "conv3d_bwd: dw_acc_banks 7 is not in 1..6 (6: the machine's PSUM banks "
                       "but the 2 that hold transposes)",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("dw_depth_group", "0"), "conv3d_bwd: dw_depth_group 0 is below 1",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build("dw_lead", "-1"), "conv3d_bwd: dw_lead -1 is below 0",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"dw_lead", "soon"}}),
                       "conv3d_bwd: parameter dw_lead takes integers or auto, not 'soon'",
                       neuronsim::Error);
  CHECK_THROWS_AS(parseParams(spec, {{"dw_overlap", "both"}}), neuronsim::Error);
}

TEST_CASE("schedule knobs: conv3d_transpose's kernel = stride knobs") {
  // Declared schedule knobs (auto default, sweep candidates led by auto; the conv core's knobs
  // are declared by conv_plan's table).
  const std::set<std::string> declared = scheduleNames("conv3d_transpose");
  const std::vector<ParamSpec> phaseKnobs = phaseScheduleParams();
  REQUIRE(phaseKnobs.size() == 4);
  for (const ParamSpec& p : phaseKnobs) {
    CAPTURE(p.name);
    CHECK(declared.count(p.name) == 1);
    CHECK(p.schedule);
    CHECK(p.defaultValue == kAuto);
    const std::vector<std::string> candidates = sweepCandidates(p);
    REQUIRE(candidates.size() >= 3);
    CHECK(candidates[0] == kAuto);
  }
  // Every candidate gives the reference result on kernel = stride shapes: odd H and W with
  // C_out 6 (two depth phases per matmul), and 2 C_in tiles with bias over 2 batches, bf16.
  const std::vector<testing::ConvCase> bases = {
      {{1, 5, 6, 5, 3}, {2, 2, 2, 5, 6}, 0, {{"stride", "2"}}},
      {{2, 130, 3, 3, 2}, {2, 1, 2, 130, 20}, 20, {{"stride", "2,1,2"}}, Dtype::Bf16},
  };
  for (const ParamSpec& p : phaseKnobs)
    for (const std::string& value : sweepCandidates(p)) {
      if (value == kAuto) continue;
      for (testing::ConvCase c : bases) {
        CAPTURE(p.name);
        CAPTURE(value);
        c.params.push_back({p.name, value});
        testing::checkConvCase(conv3dTransposeSpec(), c);
      }
    }
}

TEST_CASE("schedule knobs: conv3d_transpose values out of range are one-line errors") {
  const auto options = [](const std::string& name, const std::string& value) {
    return phaseOptions(parseParams(conv3dTransposeSpec(), {{name, value}}));
  };
  CHECK(options("x_loads", "64").xLoads == 64);
  CHECK_THROWS_WITH_AS(options("x_loads", "0"), "conv3d_transpose: x_loads 0 is not in 1..64",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(options("x_loads", "65"), "conv3d_transpose: x_loads 65 is not in 1..64",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(options("first_store_positions", "-2"),
                       "conv3d_transpose: first_store_positions -2 is not in 1..16777216",
                       neuronsim::Error);
  CHECK(options("first_store_positions", "auto").firstStorePositions == 0);
}

TEST_CASE("schedule knobs: every int knob's range is checked whatever path the run takes") {
  // Each kernel on its default shape, its other knobs automatic: a value outside the declared
  // range is refused by parseParams (lo, hi) or buildKernel (the machine's bound) even where this
  // shape never reads the knob (matmul's kblocked knobs in mode both, conv3d_bwd's dx knobs
  // without dx: compute_dx false); a value inside still builds or is at most ignored.
  const neuronsim::isa::Geometry geometry;
  int checked = 0;
  for (const KernelSpec& spec : kernelRegistry()) {
    for (const ParamSpec* p : scheduleParams(spec)) {
      if (p->type != ParamType::Int) continue;
      CAPTURE(spec.name);
      CAPTURE(p->name);
      // Every int knob declares the values that mean something.
      REQUIRE(p->lo != std::numeric_limits<int64_t>::min());
      const bool machine = p->machineHi != nullptr;
      std::vector<std::pair<std::string, std::string>> off = {};
      if (spec.name == "conv3d_bwd") off = {{"compute_dx", "false"}, {"compute_dw", "false"}};
      const auto build = [&](int64_t value) {
        auto texts = off;
        texts.emplace_back(p->name, std::to_string(value));
        const ParamValues params = parseParams(spec, texts);
        buildKernel(spec, params, checkShapes(spec, spec.defaultShapes, params), Dtype::Fp32,
                    geometry);
      };
      const std::string below = fmt::format("{}: {} {} is", spec.name, p->name, p->lo - 1);
      CHECK_THROWS_WITH_AS(build(p->lo - 1), doctest::Contains(below.c_str()), neuronsim::Error);
      const int64_t hi = machine ? std::min(p->hi, p->machineHi(geometry)) : p->hi;
      if (hi < neuronsim::isa::kMaxParamValue) {  // above it, parsing refuses the text
        const std::string above = fmt::format("{}: {} {} is not in", spec.name, p->name, hi + 1);
        CHECK_THROWS_WITH_AS(build(hi + 1), doctest::Contains(above.c_str()), neuronsim::Error);
      }
      ++checked;
    }
  }
  CHECK(checked >= 25);
}
