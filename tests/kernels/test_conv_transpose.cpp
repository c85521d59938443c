// conv3d_transpose against its reference (a direct scatter) on odd shapes, both filter layouts
// and flip settings, interpreter vs timed bit for bit, and its errors.
#include <doctest/doctest.h>

#include <algorithm>

#include "isa/error.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_transpose_phases.h"
#include "kernels/harness/run_kernel.h"
#include "sim/simulator.h"
#include "test_conv_check.h"
#include "traces/event.h"

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

/// The phase path's plan of `c` on `geometry` (trn2's by default).
PhasePlan phasePlanOf(const ConvCase& c, const isa::Geometry& geometry = testing::trn2().geometry) {
  const ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  const ParamValues params = parseParams(conv3dTransposeSpec(), c.params);
  return planPhases(conv3dTransposeCore(shapes, params), c.dtype, geometry, convOptions(params),
                    phaseOptions(params));
}

/// Rows (d * H + h) of batch-major input positions a span covers: [first, last).
std::pair<int64_t, int64_t> rowsOf(const PhaseSpan& s, const Shape& x) {
  const int64_t first = (s.b * x[2] + s.d0) * x[3] + s.h0;
  return {first, first + (s.nd == 1 ? s.nh : s.nd * x[3])};
}

/// Every block is whole planes or rows of one plane, the blocks tile the input in order, and
/// each load and store covers exactly its blocks' rows.
void checkPlanCovers(const PhasePlan& p, const Shape& x) {
  int64_t next = 0;
  for (const PhaseSpan& s : p.blocks) {
    CHECK((s.nd == 1 || (s.h0 == 0 && s.nh == x[3])));
    CHECK(rowsOf(s, x).first == next);
    next = rowsOf(s, x).second;
  }
  CHECK(next == x[0] * x[2] * x[3]);
  for (const auto* groups : {&p.loads, &p.stores}) {
    int64_t block = 0;
    for (const PhasePlan::Group& g : *groups) {
      CHECK(g.first == block);
      CHECK(g.last > g.first);
      CHECK(rowsOf(g.span, x).first == rowsOf(p.blocks[static_cast<size_t>(g.first)], x).first);
      CHECK(rowsOf(g.span, x).second ==
            rowsOf(p.blocks[static_cast<size_t>(g.last - 1)], x).second);
      block = g.last;
    }
    CHECK(block == static_cast<int64_t>(p.blocks.size()));
  }
}

/// Store group sizes in input rows.
std::vector<int64_t> storeRows(const PhasePlan& p, const Shape& x) {
  std::vector<int64_t> rows;
  for (const PhasePlan::Group& g : p.stores)
    rows.push_back(rowsOf(g.span, x).second - rowsOf(g.span, x).first);
  return rows;
}

/// Planes of each x load of a plan of whole planes.
std::vector<int64_t> loadPlanes(const PhasePlan& p) {
  std::vector<int64_t> planes;
  for (const PhasePlan::Group& g : p.loads) planes.push_back(g.span.nd);
  return planes;
}

TEST_CASE("conv3d_transpose: kernel = stride stores and loads ramp up") {
  // The benchmark shape grown: half a plane first, then each group as large as all before it;
  // x in 2 planes (1 KiB per partition), half the rest and the rest; one plane per matmul.
  const ConvCase bench{{1, 128, 8, 16, 16},
                       {2, 2, 2, 128, 64},
                       0,
                       {{"stride", "2"}, {"store_ramp", "grow"}},
                       Dtype::Bf16};
  const PhasePlan p = phasePlanOf(bench);
  CHECK(storeRows(p, bench.x) == std::vector<int64_t>{8, 8, 16, 32, 64});
  CHECK(loadPlanes(p) == std::vector<int64_t>{2, 3, 3});
  CHECK(p.blocks.size() == 9);
  checkPlanCovers(p, bench.x);
  // x_loads 3: 1, 2 planes, the last taking the rest; deeper inputs split the rest in halves.
  ConvCase doubling = bench;
  doubling.params = {{"stride", "2"}, {"store_ramp", "grow"}, {"x_loads", "3"}};
  CHECK(loadPlanes(phasePlanOf(doubling)) == std::vector<int64_t>{1, 2, 5});
  ConvCase deeper = bench;
  deeper.x = {1, 128, 15, 16, 16};
  CHECK(loadPlanes(phasePlanOf(deeper)) == std::vector<int64_t>{2, 7, 6});
  checkPlanCovers(phasePlanOf(deeper), deeper.x);
  // C_in 256 (planes of 1 KiB per partition, 2 PE passes each): the second load is capped at
  // the planes the DMA moves while TensorE, at its throttled start, works through the first
  // (3 here: 1, 3, 4, not 1, 4, 3); a deep input keeps half the rest, as the cap would leave
  // a last load over twice the second; without the machine's HBM rate there is no cap.
  ConvCase c256{{1, 256, 8, 16, 16}, {2, 2, 2, 256, 64}, 0, {{"stride", "2"}}, Dtype::Bf16};
  CHECK(loadPlanes(phasePlanOf(c256)) == std::vector<int64_t>{1, 3, 4});
  checkPlanCovers(phasePlanOf(c256), c256.x);
  CHECK(loadPlanes(phasePlanOf(c256, isa::Geometry{})) == std::vector<int64_t>{1, 4, 3});
  c256.x = {1, 256, 16, 16, 16};
  CHECK(loadPlanes(phasePlanOf(c256)) == std::vector<int64_t>{1, 8, 7});
  c256.x = {1, 256, 9, 16, 16};
  CHECK(loadPlanes(phasePlanOf(c256)) == std::vector<int64_t>{1, 3, 5});
  // fp32 planes of 1 KiB per partition: one plane first.
  const ConvCase fp32{{1, 8, 5, 16, 16}, {2, 2, 2, 8, 16}, 0, {{"stride", "2"}}};
  CHECK(loadPlanes(phasePlanOf(fp32)) == std::vector<int64_t>{1, 2, 2});
  // first_store_positions 2048 (a whole plane's 2048 outputs) and two x loads.
  ConvCase whole = bench;
  whole.params = {{"stride", "2"}, {"first_store_positions", "2048"}, {"x_loads", "2"}};
  CHECK_FALSE(phasePlanOf(whole).bands);  // a forced x_loads keeps auto off bands
  const PhasePlan q = phasePlanOf(whole);
  CHECK(storeRows(q, whole.x) == std::vector<int64_t>{16, 16, 32, 64});
  CHECK(q.loads.size() == 2);
  checkPlanCovers(q, whole.x);
  // fp32 outputs of 4 KiB per plane and partition: growing groups stop at 4 planes (16 KiB).
  ConvCase deep{{1, 8, 24, 16, 16}, {2, 2, 2, 8, 64}, 0, {{"stride", "2"}, {"store_ramp", "grow"}}};
  const PhasePlan r = phasePlanOf(deep);
  const std::vector<int64_t> grown = storeRows(r, deep.x);
  CHECK(*std::max_element(grown.begin(), grown.end()) == 64);
  checkPlanCovers(r, deep.x);
  // fp32 matmuls (4 cycles per column) take most of the HBM time: auto keeps one plane per
  // group after the first plane, as flat does; bf16 grows.
  deep.params = {{"stride", "2"}};
  for (int64_t rows : storeRows(phasePlanOf(deep), deep.x)) CHECK(rows <= 16);
  deep.dtype = Dtype::Bf16;
  CHECK(storeRows(phasePlanOf(deep), deep.x).back() > 16);
  deep.params = {{"stride", "2"}, {"store_ramp", "flat"}};
  for (int64_t rows : storeRows(phasePlanOf(deep), deep.x)) CHECK(rows <= 16);
  checkPlanCovers(phasePlanOf(deep), deep.x);
  // Planes wider than a matmul: rows of one plane, each its own load and store.
  const ConvCase wide{{1, 5, 3, 40, 30}, {2, 2, 2, 5, 7}, 0, {{"stride", "2"}}};
  const PhasePlan w = phasePlanOf(wide);
  CHECK(w.stores.size() == w.blocks.size());
  CHECK(w.loads.size() == w.blocks.size());
  checkPlanCovers(w, wide.x);
}

/// Input positions of box `s`.
int64_t positionsOf(const PhaseSpan& s, const Shape& x) {
  return s.nd * s.nh * x[4];
}

/// True when box `inner` lies in box `outer`.
bool within(const PhaseSpan& inner, const PhaseSpan& outer) {
  return inner.b == outer.b && inner.d0 >= outer.d0 && inner.d0 + inner.nd <= outer.d0 + outer.nd &&
         inner.h0 >= outer.h0 && inner.h0 + inner.nh <= outer.h0 + outer.nh;
}

/// A plan of boxes: the blocks cover every input position once, and each load and store is a
/// run of consecutive blocks that lie in its box and fill it.
void checkBoxPlan(const PhasePlan& p, const Shape& x) {
  std::vector<int> covered(static_cast<size_t>(x[0] * x[2] * x[3]), 0);
  for (const PhaseSpan& s : p.blocks)
    for (int64_t d = s.d0; d < s.d0 + s.nd; ++d)
      for (int64_t h = s.h0; h < s.h0 + s.nh; ++h)
        ++covered[static_cast<size_t>((s.b * x[2] + d) * x[3] + h)];
  CHECK(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }));
  for (const auto* groups : {&p.loads, &p.stores}) {
    int64_t block = 0;
    for (const PhasePlan::Group& g : *groups) {
      CHECK(g.first == block);
      int64_t positions = 0;
      for (int64_t i = g.first; i < g.last; ++i) {
        CHECK(within(p.blocks[static_cast<size_t>(i)], g.span));
        positions += positionsOf(p.blocks[static_cast<size_t>(i)], x);
      }
      CHECK(positions == positionsOf(g.span, x));
      block = g.last;
    }
    CHECK(block == static_cast<int64_t>(p.blocks.size()));
  }
}

TEST_CASE("conv3d_transpose: store_ramp bands plans the other planes in bands of rows") {
  // The benchmark shape: plane 0 in half-plane groups and one load, then planes 1-7 in bands
  // of 3, 5 and 8 rows, x for them in rows 0-4 and 5-15; blocks of 2 rows over 7 planes. Auto
  // takes bands here (one batch, 7 other planes, 2-plane auto first loads, trn2's DMA engines).
  ConvCase bench{{1, 128, 8, 16, 16},
                 {2, 2, 2, 128, 64},
                 0,
                 {{"stride", "2"}, {"store_ramp", "bands"}},
                 Dtype::Bf16};
  const PhasePlan p = phasePlanOf(bench);
  CHECK(p.bands);
  ConvCase automatic = bench;
  automatic.params = {{"stride", "2"}};
  CHECK(phasePlanOf(automatic).bands);
  CHECK(phasePlanOf(automatic).stores.size() == p.stores.size());
  // Auto keeps grow with 3 other planes, 2 batches, planes of 1 KiB per partition (a one-plane
  // first load anyway: C_in 256 or 16x32), on trn1 (DMA engines slower than its HBM share) and
  // on a geometry without a machine.
  for (const Shape& x :
       {Shape{1, 128, 4, 16, 16}, Shape{2, 128, 8, 16, 16}, Shape{1, 128, 8, 16, 32}}) {
    ConvCase other = automatic;
    other.x = x;
    CHECK_FALSE(phasePlanOf(other).bands);
  }
  ConvCase wideCin = automatic;
  wideCin.x = {1, 256, 8, 16, 16};
  wideCin.filters = {2, 2, 2, 256, 64};
  CHECK_FALSE(phasePlanOf(wideCin).bands);
  CHECK_FALSE(phasePlanOf(automatic, sim::loadMachine("trn1").geometry).bands);
  CHECK_FALSE(phasePlanOf(automatic, isa::Geometry{}).bands);
  automatic.x = {1, 128, 5, 16, 16};
  CHECK(phasePlanOf(automatic).bands);
  checkBoxPlan(p, bench.x);
  std::vector<int64_t> rows, planes;
  for (const PhasePlan::Group& g : p.stores) rows.push_back(g.span.nh), planes.push_back(g.span.nd);
  CHECK(rows == std::vector<int64_t>{8, 8, 3, 5, 8});
  CHECK(planes == std::vector<int64_t>{1, 1, 7, 7, 7});
  REQUIRE(p.loads.size() == 3);
  CHECK(p.loads[1].span.nh == 5);
  CHECK(p.loads[2].span.h0 == 5);
  for (const PhaseSpan& s : p.blocks) CHECK(positionsOf(s, bench.x) <= 256);
  // The first group's 8 rows are two blocks of 4 (64 moving columns each, the matmul floor);
  // with 8x8 planes its 4 rows stay one block (halves of 16 columns would cost the floor).
  REQUIRE(p.stores[0].last == 2);
  CHECK(p.blocks[0].nh == 4);
  CHECK(p.blocks[1].h0 == 4);
  CHECK(p.stores[1].last - p.stores[1].first == 1);
  ConvCase small = bench;
  small.x = {1, 128, 8, 8, 8};
  CHECK(phasePlanOf(small).stores[0].last == 1);
  // Batch 2 repeats the bands per batch; a first group of 5 rows.
  bench.x[0] = 2;
  bench.params.push_back({"first_store_positions", "640"});
  const PhasePlan q = phasePlanOf(bench);
  checkBoxPlan(q, bench.x);
  CHECK(q.stores.size() == 10);
  CHECK(q.stores[0].span.nh == 5);
  // Too deep for 16 KiB per partition (15 planes of 2 KiB outputs), or 2 planes: grow.
  bench.x = {1, 128, 16, 16, 16};
  CHECK(storeRows(phasePlanOf(bench), bench.x) == std::vector<int64_t>{5, 5, 6, 16, 32, 64, 128});
  checkPlanCovers(phasePlanOf(bench), bench.x);
  bench.x = {1, 128, 2, 16, 16};
  checkPlanCovers(phasePlanOf(bench), bench.x);
}

TEST_CASE("conv3d_transpose: auto bands weigh the matmuls against the busiest DMA engine") {
  // C_out 32 stacked twice fills 64 output partitions: its stores go through 8 of the 16 DMA
  // engines (8 partitions each, D1), which then move as much as the benchmark's. Against the
  // HBM bytes the matmuls looked like 75% of the memory time (flat); against the first DMA
  // engine's they are 47%, and auto takes bands (trn2: 11.74 -> 10.74 us).
  ConvCase narrow{{1, 128, 8, 16, 16}, {2, 2, 2, 128, 32}, 0, {{"stride", "2"}}, Dtype::Bf16};
  const PhasePlan p = phasePlanOf(narrow);
  CHECK(p.bands);
  checkBoxPlan(p, narrow.x);
  ConvCase sixteen = narrow;
  sixteen.filters = {2, 2, 2, 128, 16};
  CHECK(phasePlanOf(sixteen).bands);
  // Unchanged where bands do not pay: trn1 (flat), 3 other planes (flat: one plane per group
  // after the first plane), fp32 (matmul-bound against either estimate: flat).
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK_FALSE(phasePlanOf(narrow, trn1.geometry).bands);
  ConvCase shallow = narrow;
  shallow.x = {1, 128, 4, 16, 16};
  CHECK_FALSE(phasePlanOf(shallow).bands);
  CHECK(storeRows(phasePlanOf(shallow), shallow.x) == std::vector<int64_t>{8, 8, 16, 16, 16});
  ConvCase fp32 = narrow;
  fp32.dtype = Dtype::Fp32;
  CHECK_FALSE(phasePlanOf(fp32).bands);
  // An odd shape the engine estimate turns from flat to bands (C_in 20 on 20 partitions, C_out
  // 24 stacked on 48), bit-exact with bias; and on trn1, where it stays flat.
  const ConvCase odd{{1, 20, 6, 7, 5}, {2, 2, 2, 20, 24}, 24, {{"stride", "2"}}, Dtype::Bf16};
  const PhasePlan q = phasePlanOf(odd);
  CHECK(q.bands);
  checkBoxPlan(q, odd.x);
  check(odd);
  CHECK_FALSE(phasePlanOf(odd, trn1.geometry).bands);
  testing::checkConvCase(conv3dTransposeSpec(), odd, trn1);
}

TEST_CASE("conv3d_transpose: evictions never wait for a PSUM bank the other engine reads") {
  // Each accumulator has a bank of its own (A2: VectorE and ScalarE share a bank in turn), and
  // bands evict whole blocks; the grow path splits a block between the engines, so it may wait.
  const KernelSpec spec = conv3dTransposeSpec();
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  for (int64_t depth : {5, 8}) {
    CAPTURE(depth);
    const ParamValues params = parseParams(spec, {{"stride", "2"}});
    const KernelShapes shapes = checkShapes(
        spec, {{"x_in", {1, 128, depth, 16, 16}}, {"filters", {2, 2, 2, 128, 64}}}, params);
    const isa::Program program = buildKernel(spec, params, shapes, Dtype::Bf16, trn2.geometry);
    traces::EventLog log;
    sim::SimOptions options;
    options.timingOnly = true;
    options.sink = &log;
    sim::simulate(program, trn2, nullptr, options);
    REQUIRE(!log.instructions.empty());
    for (const traces::InstructionEvent& e : log.instructions)
      CHECK(e.stall != traces::StallCause::AccessConflict);
  }
}

TEST_CASE("conv3d_transpose: store_ramp bands is bit-exact") {
  const std::vector<ConvCase> cases = {
      // odd H and W, C_out 64 (two depth phases per matmul), bf16, bias
      {{1, 12, 5, 7, 5},
       {2, 2, 2, 12, 64},
       64,
       {{"stride", "2"}, {"store_ramp", "bands"}},
       Dtype::Bf16},
      // C_out 40 (not 64), fp32, blocks of one row over 5 planes (36 positions per block)
      {{1, 6, 6, 9, 4},
       {2, 2, 2, 6, 40},
       0,
       {{"stride", "2"}, {"store_ramp", "bands"}, {"chunk_positions", "288"}}},
      // C_out 150 > 128 (two C_out tiles, one kd phase per matmul), C_in 130, B 2, relu
      {{2, 130, 4, 3, 3},
       {2, 2, 2, 130, 150},
       150,
       {{"stride", "2"}, {"store_ramp", "bands"}, {"activation_fn", "relu"}},
       Dtype::Bf16},
      // Kd 1 (one depth phase per matmul), odd strides, blocks of one row over 4 planes, gelu
      {{1, 5, 5, 6, 11},
       {1, 3, 2, 5, 9},
       9,
       {{"stride", "1,3,2"},
        {"store_ramp", "bands"},
        {"chunk_positions", "396"},
        {"activation_fn", "gelu"}}},
      // W 33, H 10: the first group's 5 rows split into blocks of 3 and 2 rows (66 columns
      // and more each), bias
      {{1, 6, 5, 10, 33},
       {2, 2, 2, 6, 20},
       20,
       {{"stride", "2"}, {"store_ramp", "bands"}},
       Dtype::Bf16},
      // H 3 (one row per band), evictions on one engine, first group of one row
      {{1, 4, 3, 3, 8},
       {2, 2, 2, 4, 32},
       0,
       {{"stride", "2"},
        {"store_ramp", "bands"},
        {"first_store_positions", "1"},
        {"evict_engine", "vector"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    CHECK(phases(c));
    const PhasePlan p = phasePlanOf(c);
    checkBoxPlan(p, c.x);
    CHECK(std::any_of(p.stores.begin(), p.stores.end(), [&](const PhasePlan::Group& g) {
      return g.span.nd > 1 && g.span.nh < c.x[3];
    }));
    if (c.x[4] == 33) CHECK(p.stores[0].last == 2);  // the first group in two blocks
    check(c);
  }
}

TEST_CASE("conv3d_transpose: kernel = stride schedules are bit-exact") {
  const std::vector<ConvCase> cases = {
      // odd H (first group ceil(H/2) = 3 rows), B 2 (groups keep growing across batches)
      {{2, 6, 5, 5, 3}, {2, 2, 2, 6, 10}, 10, {{"stride", "2"}}},
      // two C_out tiles with store groups spanning several x loads (the x ring holds them)
      {{1, 9, 8, 2, 3},
       {2, 1, 2, 9, 150},
       150,
       {{"stride", "2,1,2"}, {"first_store_positions", "8"}, {"x_loads", "4"}}},
      // Kd 1, non-cubic strides, fp32, x in one load, first group of one row
      {{1, 7, 6, 3, 5},
       {1, 3, 2, 7, 9},
       0,
       {{"stride", "1,3,2"}, {"x_loads", "1"}, {"first_store_positions", "1"}}},
      // bf16, Kd 4 stacked, evictions on one engine, flipped taps, 8 PSUM buffers forced
      {{1, 16, 5, 4, 4},
       {4, 2, 2, 16, 32},
       32,
       {{"stride", "4,2,2"},
        {"flip_filter_taps_in_kernel", "true"},
        {"evict_engine", "vector"},
        {"psum_buffers", "2"},
        {"activation_fn", "silu"}},
       Dtype::Bf16},
      // first group larger than a plane (clamped to one plane), scalar evictions, flat
      {{1, 4, 4, 3, 4},
       {2, 2, 2, 4, 6},
       0,
       {{"stride", "2"},
        {"first_store_positions", "100000"},
        {"evict_engine", "scalar"},
        {"store_ramp", "flat"}}},
      // bf16 forced to grow across 2 batches and 2 C_in tiles
      {{2, 130, 3, 2, 2},
       {2, 2, 2, 130, 20},
       20,
       {{"stride", "2"}, {"store_ramp", "grow"}},
       Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    CHECK(phases(c));
    const PhasePlan p = phasePlanOf(c);
    if (p.bands)  // auto bands: stride 4,2,2 over 5 planes of 4x4
      checkBoxPlan(p, c.x);
    else
      checkPlanCovers(p, c.x);
    check(c);
  }
}

TEST_CASE("conv3d_transpose: kernel = stride plans follow the machine") {
  // The flat / grow choice weighs PE cycles against HBM bytes at the machine's HBM bytes per PE
  // cycle: trn2 and trn1 (about 150) grow bf16 groups; ten times the HBM bandwidth makes the
  // same shape matmul-bound (flat), and a geometry without a machine assumes memory-bound.
  const ConvCase c{{1, 8, 4, 8, 8}, {2, 2, 2, 8, 64}, 0, {{"stride", "2"}}, Dtype::Bf16};
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(trn1.geometry.hbmBytesPerPeCycle == doctest::Approx(410.0 / 2.8));
  CHECK(testing::trn2().geometry.hbmBytesPerPeCycle == doctest::Approx(362.5 / 2.4));
  auto largest = [&](const isa::Geometry& g) {
    const std::vector<int64_t> rows = storeRows(phasePlanOf(c, g), c.x);
    return *std::max_element(rows.begin(), rows.end());
  };
  CHECK(largest(testing::trn2().geometry) > 8);
  CHECK(largest(trn1.geometry) > 8);
  CHECK(largest(isa::Geometry{}) > 8);
  CHECK(largest(sim::loadMachine("trn2", {"hbm_gbps=3625"}).geometry) == 8);
  CHECK(largest(sim::loadMachine("trn1", {"hbm_gbps=4100"}).geometry) == 8);
  // fp32 weighs each moving column by the machine's fp32 factor: at trn2's 4 this fp32 shape is
  // matmul-bound (flat), at a tenth of it memory-bound (grow).
  ConvCase fp32 = c;
  fp32.dtype = Dtype::Fp32;
  auto largestFp32 = [&](const isa::Geometry& g) {
    const std::vector<int64_t> rows = storeRows(phasePlanOf(fp32, g), fp32.x);
    return *std::max_element(rows.begin(), rows.end());
  };
  const sim::MachineConfig fastFp32 = sim::loadMachine("trn2", {"fp32_matmul_factor=0.4"});
  CHECK(fastFp32.geometry.fp32MatmulFactor == doctest::Approx(0.4));
  CHECK(largestFp32(testing::trn2().geometry) == 8);
  CHECK(largestFp32(fastFp32.geometry) > 8);
  // The engine clocks kernels split work by are the machine's.
  CHECK(trn1.geometry.vectorGhz == doctest::Approx(1.12));
  CHECK(trn1.geometry.scalarGhz == doctest::Approx(1.4));
  CHECK(trn1.geometry.gpsimdGhz == doctest::Approx(1.4));
  // Bit-exact and correct on trn1, and with fewer DMA queues (the kernel splits the machine's
  // queues in quarters; with 3 it takes the builder's round robins, below 3 every DMA is
  // triggered from Sync, as engines cannot share a queue).
  const std::vector<ConvCase> cases = {
      c,
      {{2, 130, 3, 2, 3}, {2, 2, 2, 130, 20}, 20, {{"stride", "2"}}, Dtype::Bf16},
      {{1, 5, 4, 3, 5}, {3, 1, 2, 5, 7}, 7, {{"stride", "3,1,2"}}},
  };
  for (const ConvCase& k : cases) {
    testing::checkConvCase(conv3dTransposeSpec(), k, trn1);
    testing::checkConvCase(conv3dTransposeSpec(), k, sim::loadMachine("trn2", {"dma_queues=8"}));
    for (const char* queues : {"dma_queues=3", "dma_queues=2", "dma_queues=1"})
      testing::checkConvCase(conv3dTransposeSpec(), k, sim::loadMachine("trn2", {queues}));
  }
}

TEST_CASE("conv3d_transpose: kernel = stride evicts on ScalarE where PSUM reads serialize") {
  // trn1 (NC-v2 access conflicts): auto evicts on ScalarE only (benchmark 20.60 -> 19.96 us);
  // trn2 splits the evictions between VectorE and ScalarE.
  const KernelSpec spec = conv3dTransposeSpec();
  auto evictions = [&](const sim::MachineConfig& machine, isa::Engine engine) {
    const ParamValues params = parseParams(spec, {{"stride", "2"}});
    const KernelShapes shapes =
        checkShapes(spec, {{"x_in", {1, 16, 4, 8, 8}}, {"filters", {2, 2, 2, 16, 32}}}, params);
    const isa::Program program = buildKernel(spec, params, shapes, Dtype::Bf16, machine.geometry);
    int n = 0;
    for (const isa::Instruction& inst : program.instructions)
      n += inst.engine == engine && !inst.srcs.empty() && inst.srcs[0].space == isa::Space::Psum;
    return n;
  };
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(evictions(trn1, isa::Engine::Vector) == 0);
  CHECK(evictions(trn1, isa::Engine::Scalar) > 0);
  CHECK(evictions(testing::trn2(), isa::Engine::Vector) > 0);
  CHECK(evictions(testing::trn2(), isa::Engine::Scalar) > 0);
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
