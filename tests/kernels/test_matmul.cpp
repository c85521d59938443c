// matmul against its reference on many shapes, both dtypes, both tiling modes.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "isa/error.h"
#include "kernel_check.h"
#include "kernels/harness/run_inputs.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/run_summary.h"
#include "kernels/matmul/matmul_schedule.h"
#include "kernels/reference/matmul_ref.h"
#include "test_builder_oracle.h"

using neuronsim::isa::Dtype;
using neuronsim::kernels::ShapeMap;
using neuronsim::kernels::testing::checkKernelCase;
using neuronsim::kernels::testing::KernelCase;

namespace {

KernelCase matmulCase(int64_t k, int64_t m, int64_t n, Dtype dtype = Dtype::Fp32, uint64_t seed = 0,
                      std::vector<std::pair<std::string, std::string>> params = {}) {
  return KernelCase{"matmul", {{"lhsT", {k, m}}, {"rhs", {k, n}}}, std::move(params), dtype, seed};
}

struct Shape3 {
  int64_t k, m, n;
};

/// Shapes larger than 512 in every dimension (odd ones included): the set the 50%-of-roofline
/// goal covers. The last is the trigger-bound shape of issue 10 (timing only: too big to check).
const Shape3 kLargeShapes[] = {
    {1030, 520, 700}, {600, 640, 1100}, {2048, 1024, 2048}, {777, 1300, 513}};
const Shape3 kLargeTimingShapes[] = {{16384, 512, 1024}, {4096, 4096, 8192}, {8192, 2048, 1536}};

/// A deterministic spread of shapes larger than 512 in every dim: each dim drawn from 513..1100
/// by a fixed linear congruential sequence, so odd sizes, K and M tails of every length and
/// ragged N passes all occur.
std::vector<Shape3> generatedLargeShapes(int count) {
  std::vector<Shape3> shapes;
  uint64_t x = 12345;
  const auto draw = [&x] {
    x = (x * 1103515245 + 12345) % (uint64_t{1} << 31);
    return static_cast<int64_t>(513 + x % 588);
  };
  for (int i = 0; i < count; ++i) {
    const int64_t k = draw(), m = draw(), n = draw();
    shapes.push_back({k, m, n});
  }
  return shapes;
}

/// Simulated time over roofline of a timing-only run, in percent.
double rooflinePercent(const Shape3& s, Dtype dtype) {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  const auto machine = neuronsim::sim::loadMachine("trn2");
  RunOptions options;
  options.dtype = dtype;
  options.mode = RunMode::TimingOnly;
  const KernelRun run = runKernel(
      spec, params, shapesOnly({{"lhsT", {s.k, s.m}}, {"rhs", {s.k, s.n}}}), machine, options);
  return runSummary(kernelRunInfo(spec, run.shapes, dtype, machine, params), run.sim, 0)
      .at("roofline_percent")
      .get<double>();
}

}  // namespace

TEST_CASE("matmul reference: hand-computed 2x2") {
  // lhsT = [[1, 2], [3, 4]] is A^T for A = [[1, 3], [2, 4]]; rhs = [[5, 6], [7, 8]].
  const auto out = neuronsim::kernels::matmulReference({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2);
  CHECK(out == std::vector<float>{26, 30, 38, 44});
}

TEST_CASE("matmul fp32: 1x1x1") {
  checkKernelCase(matmulCase(1, 1, 1));
}
TEST_CASE("matmul fp32: one full tile 128x128x512") {
  checkKernelCase(matmulCase(128, 128, 512));
}
TEST_CASE("matmul fp32: odd K=130 M=129 N=513") {
  checkKernelCase(matmulCase(130, 129, 513, Dtype::Fp32, 1));
}
TEST_CASE("matmul fp32: K=256 M=64 N=1000") {
  checkKernelCase(matmulCase(256, 64, 1000, Dtype::Fp32, 2));
}
TEST_CASE("matmul fp32: K=300 M=200 N=100") {
  checkKernelCase(matmulCase(300, 200, 100, Dtype::Fp32, 3));
}
TEST_CASE("matmul fp32: K=1024 M=257 N=64") {
  checkKernelCase(matmulCase(1024, 257, 64, Dtype::Fp32, 4));
}
TEST_CASE("matmul fp32: K=7 M=3 N=1536") {
  checkKernelCase(matmulCase(7, 3, 1536, Dtype::Fp32, 5));
}
TEST_CASE("matmul bf16: odd K=130 M=129 N=513") {
  checkKernelCase(matmulCase(130, 129, 513, Dtype::Bf16, 6));
}
TEST_CASE("matmul bf16: K=256 M=256 N=512") {
  checkKernelCase(matmulCase(256, 256, 512, Dtype::Bf16, 7));
}
TEST_CASE("matmul bf16: K=1 M=130 N=2") {
  checkKernelCase(matmulCase(1, 130, 2, Dtype::Bf16, 8));
}

/// checkKernelCase on every shape in both dtypes, seeds from `seed` on.
template <size_t Count>
void checkShapeTable(const Shape3 (&shapes)[Count], uint64_t seed) {
  for (const Shape3& s : shapes)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.k);
      CAPTURE(s.m);
      CAPTURE(s.n);
      checkKernelCase(matmulCase(s.k, s.m, s.n, dtype, seed++));
    }
}

TEST_CASE("matmul: a table of odd shapes in fp32 and bf16") {
  const Shape3 shapes[] = {{2, 1, 1},   {1, 1, 511},      {127, 128, 129}, {128, 1, 512},
                           {129, 2, 3}, {255, 17, 33},    {64, 130, 200},  {384, 96, 768},
                           {5, 250, 9}, {200, 128, 1025}, {300, 192, 700}};
  checkShapeTable(shapes, 100);
}

TEST_CASE("matmul: shapes larger than 512 in every dim, fp32 and bf16") {
  checkShapeTable(kLargeShapes, 200);
}

TEST_CASE("matmul: every mode and schedule knob on odd shapes") {
  const std::vector<std::pair<std::string, std::string>> schedules[] = {
      {{"mode", "resident"}},
      {{"mode", "both"}, {"n_tile", "128"}, {"load_chunks", "3"}, {"store_engines", "gpsimd"}},
      {{"mode", "both"}, {"m_tail", "transposed"}, {"n_tile", "200"}, {"out_buffers", "2"}},
      {{"mode", "both"}, {"m_tail", "direct"}, {"side_engine", "gpsimd"}, {"store_tiles", "3"}},
      {{"mode", "both"}, {"k_tail_delay", "2"}, {"load_chunks", "2"}, {"evict", "alternate"}},
      {{"mode", "both"}, {"k_tail_delay", "64"}, {"rhs_engine", "scalar"}},
      {{"mode", "kblocked"}},
      {{"mode", "kblocked"},
       {"block_m", "2"},
       {"block_n", "1"},
       {"k_chunk", "3"},
       {"store_tiles", "2"}},
      {{"mode", "kblocked"},
       {"block_m", "1"},
       {"block_n", "2"},
       {"load_buffers", "1"},
       {"psum_buffers", "2"},
       {"evict", "scalar"},
       {"load_queues", "3"}},
      {{"mode", "resident"},
       {"load_chunks", "1"},
       {"load_buffers", "3"},
       {"psum_buffers", "2"},
       {"out_buffers", "1"},
       {"evict", "vector"},
       {"load_queues", "4"}},
  };
  uint64_t seed = 300;
  for (const auto& params : schedules)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      checkKernelCase(matmulCase(1030, 520, 700, dtype, seed++, params));
      checkKernelCase(matmulCase(300, 130, 1100, dtype, seed++, params));
    }
}

TEST_CASE("matmul: K tails loaded after any number of Sync loads (k_tail_delay)") {
  // A 1-row and a 127-row K tail, one and several M tiles and column passes; 64 puts the tails
  // after every other load.
  const Shape3 shapes[] = {{129, 300, 513}, {255, 129, 700}, {513, 513, 130}};
  uint64_t seed = 420;
  for (const Shape3& s : shapes)
    for (const char* delay : {"0", "1", "3", "64"})
      checkKernelCase(matmulCase(s.k, s.m, s.n, Dtype::Bf16, seed++,
                                 {{"mode", "both"}, {"k_tail_delay", delay}}));
}

TEST_CASE("matmul: kblocked with more than 63 K chunks (the chunk ramp must not overflow)") {
  // K = 65 tiles + 1 row in chunks of one tile: 66 chunks; the ramp's doubling size once
  // overflowed at the 64th and sliced the chunk buffer with a negative end.
  for (const char* ramp : {"1", "0"})
    checkKernelCase(matmulCase(65 * 128 + 1, 129, 70, Dtype::Bf16, 411,
                               {{"mode", "kblocked"}, {"k_chunk", "1"}, {"ramp_chunks", ramp}}));
}

TEST_CASE("matmul: a transposed M tail without direct tiles (M < 128)") {
  using namespace neuronsim::kernels;
  const Shape3 shapes[] = {{129, 2, 3}, {255, 17, 33}, {300, 100, 700}};
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {{"m_tail", "transposed"}});
  const auto geometry = neuronsim::sim::loadMachine("trn2").geometry;
  uint64_t seed = 400;
  for (const Shape3& s : shapes)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.m);
      // Every matmul is the tail's: the planner took the transposed path and no direct tile.
      const ShapeMap inputs = {{"lhsT", {s.k, s.m}}, {"rhs", {s.k, s.n}}};
      const neuronsim::isa::Program program =
          buildKernel(spec, params, checkShapes(spec, inputs, params), dtype, geometry);
      int64_t tail = 0, direct = 0;
      for (const neuronsim::isa::Instruction& inst : program.instructions)
        if (inst.opcode == neuronsim::isa::Opcode::NcMatmul)
          ++(inst.note == "matmul (transposed tail)" ? tail : direct);
      CHECK(tail > 0);
      CHECK(direct == 0);
      checkKernelCase(matmulCase(s.k, s.m, s.n, dtype, seed++, {{"m_tail", "transposed"}}));
    }
}

TEST_CASE("matmul: transposed rows wider than the M tail are exact on odd shapes") {
  struct WideCase {
    Shape3 shape;
    const char* tiles;
  };
  // Own lhsT tile (rows > 128), the last tile (M a multiple of 128), all of M transposed, a
  // 2-column last rhs chunk, and the most tiles.
  const WideCase cases[] = {{{1030, 520, 700}, "1"}, {{300, 300, 513}, "1"},
                            {{200, 256, 300}, "1"},  {{130, 129, 200}, "1"},
                            {{64, 450, 130}, "3"},   {{257, 700, 1100}, "3"}};
  uint64_t seed = 500;
  for (const WideCase& c : cases)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(c.shape.m);
      CAPTURE(c.tiles);
      checkKernelCase(
          matmulCase(c.shape.k, c.shape.m, c.shape.n, dtype, seed++,
                     {{"mode", "both"}, {"m_tail", "transposed"}, {"m_tail_tiles", c.tiles}}));
    }
}

TEST_CASE("matmul: mode both loads each operand's K tail in one DMA") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {{"mode", "both"}});
  const auto geometry = neuronsim::sim::loadMachine("trn2").geometry;
  // Two column passes and an M tail: the K tail rows of every lhsT tile and every rhs pass.
  const Shape3 shapes[] = {{513, 513, 513}, {300, 130, 1100}, {1030, 520, 700}};
  for (const Shape3& s : shapes) {
    CAPTURE(s.k);
    const ShapeMap inputs = {{"lhsT", {s.k, s.m}}, {"rhs", {s.k, s.n}}};
    const neuronsim::isa::Program program =
        buildKernel(spec, params, checkShapes(spec, inputs, params), Dtype::Bf16, geometry);
    int64_t tailLoads = 0;
    for (const neuronsim::isa::Instruction& inst : program.instructions)
      if (inst.opcode == neuronsim::isa::Opcode::DmaCopy &&
          inst.dst.space == neuronsim::isa::Space::Sbuf && inst.dst.partitionCount == s.k % 128)
        ++tailLoads;
    CHECK(tailLoads == 2);
  }
}

TEST_CASE("matmul: automatic column passes avoid a last pass narrower than 128 columns") {
  using namespace neuronsim::kernels;
  const ParamValues params = parseParams(findKernel("matmul"), {});
  const auto geometry = neuronsim::sim::loadMachine("trn2").geometry;
  const auto nTile = [&](int64_t n) {
    return resolveMatmulSchedule(params, 600, 600, n, Dtype::Bf16, geometry).nTile;
  };
  CHECK(nTile(512) == 512);
  CHECK(nTile(1024) == 512);
  CHECK(nTile(513) == 384);   // 384 + 129
  CHECK(nTile(1100) == 384);  // 384 + 384 + 332
  CHECK(nTile(790) == 512);   // 384 + 384 + 22 -> 512 + 278
  CHECK(nTile(2000) == 512);  // five 384s + 80 -> three 512s + 464
  CHECK(nTile(1540) == 384);  // both end in 4 columns
  // The wide passes of a ragged N are exact on odd shapes.
  uint64_t seed = 450;
  for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
    checkKernelCase(matmulCase(200, 130, 790, dtype, seed++));
}

TEST_CASE("matmul: automatic store groups follow the machine's DMA trigger time") {
  using namespace neuronsim::kernels;
  const ParamValues params = parseParams(findKernel("matmul"), {});
  const auto schedule = [&](const neuronsim::sim::MachineConfig& machine, Shape3 s, Dtype dtype) {
    return resolveMatmulSchedule(params, s.k, s.m, s.n, dtype, machine.geometry);
  };
  const auto trn2 = neuronsim::sim::loadMachine("trn2");
  const auto trn1 = neuronsim::sim::loadMachine("trn1");
  // 513^3 bf16 on Trn2: a 129-column pass takes TensorE 5 x 129 cycles per tile (269 ns at 2.4
  // GHz), three of them one 600 ns trigger; a 384-column pass takes 800 ns per tile, alone.
  const auto bf16 = schedule(trn2, {513, 513, 513}, Dtype::Bf16);
  CHECK(bf16.narrowStoreTiles == 3);
  CHECK(bf16.storeTiles == 1);
  // fp32 matmuls cost four times the cycles; Trn1 triggers in 46 ns: nothing to group.
  CHECK(schedule(trn2, {513, 513, 513}, Dtype::Fp32).narrowStoreTiles == 1);
  CHECK(schedule(trn1, {513, 513, 513}, Dtype::Bf16).narrowStoreTiles == 1);
  // A slower trigger groups more, up to half the out ring.
  CHECK(schedule(neuronsim::sim::loadMachine("trn2", {"dma_trigger_ns=900"}), {513, 513, 513},
                 Dtype::Bf16)
            .narrowStoreTiles == 4);
  CHECK(schedule(neuronsim::sim::loadMachine("trn2", {"dma_trigger_ns=5000"}), {513, 513, 513},
                 Dtype::Bf16)
            .narrowStoreTiles == 4);
  // Grouped stores are exact on odd shapes (a thin K tail, an M tail, several groups per pass).
  uint64_t seed = 470;
  for (const Shape3& s : {Shape3{513, 513, 513}, Shape3{130, 1000, 600}})
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.k);
      checkKernelCase(matmulCase(s.k, s.m, s.n, dtype, seed++, {{"mode", "both"}}), trn2);
      checkKernelCase(matmulCase(s.k, s.m, s.n, dtype, seed++, {{"store_tiles", "4"}}), trn2);
    }
}

TEST_CASE("matmul: automatic transposed rows follow the machine's fp32 stationary load") {
  using namespace neuronsim::kernels;
  const ParamValues params = parseParams(findKernel("matmul"), {});
  const auto rows = [&](const neuronsim::sim::MachineConfig& machine, Shape3 s, Dtype dtype) {
    return resolveMatmulSchedule(params, s.k, s.m, s.n, dtype, machine.geometry).transposedRows;
  };
  const auto trn2 = neuronsim::sim::loadMachine("trn2");
  const auto trn1 = neuronsim::sim::loadMachine("trn1");
  // Trn2 loads an fp32 stationary of 128 columns in as many cycles as 128 moving columns take:
  // the 8-row tail widens by one tile (136 rows) to hide it; Trn1's fast load needs no more
  // than the 64-cycle floor, so the tail stays alone. bf16 keeps its thin-tail rule.
  CHECK(rows(trn2, {1030, 520, 700}, Dtype::Fp32) == 136);
  CHECK(rows(trn1, {1030, 520, 700}, Dtype::Fp32) == 8);
  CHECK(rows(trn2, {1030, 520, 700}, Dtype::Bf16) == 8);
  CHECK(rows(trn2, {777, 1300, 513}, Dtype::Fp32) == 148);
  const auto fastFp32 = neuronsim::sim::loadMachine("trn2", {"ls_speedup_fp32=4"});
  CHECK(rows(fastFp32, {1030, 520, 700}, Dtype::Fp32) == 8);
  // No padding to save (M a multiple of 128), or a mid-sized tail: all direct.
  CHECK(rows(trn2, {600, 640, 1100}, Dtype::Fp32) == 0);
  CHECK(rows(trn1, {600, 740, 900}, Dtype::Fp32) == 0);
}

TEST_CASE("matmul: schedule parameters out of range are one-line errors") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ShapeMap shapes = {{"lhsT", {1024, 512}}, {"rhs", {1024, 1024}}};
  auto build = [&](std::vector<std::pair<std::string, std::string>> given) {
    const ParamValues params = parseParams(spec, given);
    buildKernel(spec, params, checkShapes(spec, shapes, params), Dtype::Bf16,
                neuronsim::isa::Geometry{});
  };
  CHECK_THROWS_WITH_AS(build({{"mode", "kblocked"}, {"block_m", "4"}, {"block_n", "4"}}),
                       "matmul: parameters block_m x block_n are 4 x 4 but a PSUM block holds at "
                       "most 8 banks",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(build({{"load_queues", "0"}}), "matmul: load_queues 0 is below 1",
                       neuronsim::Error);
  CHECK_THROWS_WITH_AS(
      build({{"mode", "kblocked"}, {"block_m", "2"}, {"block_n", "2"}, {"psum_buffers", "3"}}),
      "matmul: psum_buffers 3 is below block_m x block_n = 4, the banks one kblocked PSUM block "
      "accumulates in",
      neuronsim::Error);
  CHECK_THROWS_WITH_AS(build({{"m_tail", "transposed"}, {"m_tail_tiles", "5"}}),
                       "matmul: m_tail_tiles 5 is not in 0..3", neuronsim::Error);
  CHECK_THROWS_AS(build({{"mode", "kblocked"}, {"k_chunk", "0"}}), neuronsim::Error);
  CHECK_THROWS_AS(build({{"evict", "gpsimd"}}), neuronsim::Error);
}

// Issue 10's goal: every shape above 512 in each dim at 50% of roofline or more (1030x520x700
// bf16, memory-bound with a 6-row K tail and an 8-row M tail, is the closest at 52.2%); the
// compute-bound large ones at 80%.
TEST_CASE("matmul: large shapes stay near their roofline (timing only)") {
  for (const Shape3& s : kLargeShapes)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.k);
      CAPTURE(s.m);
      CAPTURE(s.n);
      CHECK(rooflinePercent(s, dtype) >= 50.0);
    }
  for (const Shape3& s : kLargeTimingShapes) {
    CAPTURE(s.k);
    CAPTURE(s.m);
    CAPTURE(s.n);
    CHECK(rooflinePercent(s, Dtype::Bf16) >= 80.0);
  }
}

// Issue 10's goal over generated shapes, not only the hand-picked set above. The tightest is
// 513x513x513 bf16 (50.9%; docs/kernels.md, "matmul"): its 5.8 us roofline is about as long as
// the fixed costs around the first and last matmul.
TEST_CASE("matmul: generated shapes above 512 in every dim reach 50% of roofline (timing only)") {
  std::vector<Shape3> shapes = {{513, 513, 513}, {600, 600, 600}, {520, 1030, 700}};
  for (const Shape3& s : generatedLargeShapes(12)) shapes.push_back(s);
  for (const Shape3& s : shapes)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.k);
      CAPTURE(s.m);
      CAPTURE(s.n);
      CHECK(rooflinePercent(s, dtype) >= 50.0);
    }
}

TEST_CASE("matmul: kblocked mode when rhs groups do not fit SBUF (fp32 and bf16)") {
  auto machine = neuronsim::sim::loadMachine("trn2");
  machine.geometry.sbufPartitionBytes = 16 * 1024;
  checkKernelCase(matmulCase(600, 130, 600, Dtype::Fp32, 9), machine);
  checkKernelCase(matmulCase(600, 130, 600, Dtype::Bf16, 10), machine);
}

TEST_CASE("matmul: several rhs groups on a small SBUF") {
  auto machine = neuronsim::sim::loadMachine("trn2");
  machine.geometry.sbufPartitionBytes = 48 * 1024;  // room for one 512-column group per buffer
  checkKernelCase(matmulCase(1024, 200, 1700, Dtype::Fp32, 11, {{"mode", "resident"}}), machine);
}

TEST_CASE("matmul: every mode on machines with fewer DMA queues") {
  const std::vector<std::pair<std::string, std::string>> schedules[] = {
      {{"mode", "both"}, {"store_engines", "alternate"}, {"rhs_engine", "scalar"}},
      {{"mode", "resident"}, {"load_queues", "3"}, {"store_queues", "2"}},
      {{"mode", "kblocked"}, {"block_m", "2"}},
  };
  uint64_t seed = 400;
  for (const char* queues : {"dma_queues=8", "dma_queues=12"}) {
    const auto machine = neuronsim::sim::loadMachine("trn2", {queues});
    for (const auto& params : schedules)
      checkKernelCase(matmulCase(300, 130, 1100, Dtype::Fp32, seed++, params), machine);
  }
  const auto four = neuronsim::sim::loadMachine("trn2", {"dma_queues=4"});
  CHECK_THROWS_WITH_AS(checkKernelCase(matmulCase(300, 130, 600, Dtype::Fp32, 1), four),
                       "matmul: needs at least 8 DMA queues (the machine has 4): loads, stores, "
                       "small transfers and ScalarE's rhs loads each take their own",
                       neuronsim::Error);
}

TEST_CASE("matmul: the program orders every conflicting access pair") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  for (const char* mode : {"both", "resident", "kblocked", "both-transposed-tail", "both-wide"}) {
    CAPTURE(mode);
    const std::string name = mode;
    const ParamValues params =
        name == "both-transposed-tail"
            ? parseParams(spec, {{"mode", "both"}, {"m_tail", "transposed"}})
        : name == "both-wide"
            ? parseParams(spec, {{"mode", "both"}, {"m_tail", "transposed"}, {"m_tail_tiles", "1"}})
            : parseParams(spec, {{"mode", mode}});
    const int64_t m = name == "both-wide" ? 300 : 129;
    const KernelShapes shapes =
        checkShapes(spec, {{"lhsT", {130, m}}, {"rhs", {130, 700}}}, params);
    neuronsim::isa::Geometry g;
    g.sbufPartitionBytes = 24 * 1024;
    const auto program = buildKernel(spec, params, shapes, Dtype::Bf16, g);
    CHECK(testing::unorderedConflicts(program).empty());
  }
}

TEST_CASE("matmul: shape errors name the tensors") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  CHECK_THROWS_WITH_AS(
      checkShapes(spec, {{"lhsT", {4, 5}}, {"rhs", {3, 5}}}, params),
      "matmul: lhsT has shape [4,5] and rhs [3,5] but their first axes (K) must be equal",
      neuronsim::Error);
  CHECK_THROWS_AS(checkShapes(spec, {{"lhsT", {4, 5, 1}}, {"rhs", {4, 5}}}, params),
                  neuronsim::Error);
  CHECK_THROWS_WITH_AS(checkShapes(spec, {{"lhsT", {4, 5}}}, params),
                       "matmul: input rhs is required", neuronsim::Error);
  CHECK_THROWS_AS(checkShapes(spec, {{"lhsT", {4, 5}}, {"rhs", {4, 5}}, {"bias", {5}}}, params),
                  neuronsim::Error);
}

TEST_CASE("matmul: 4096x4096 by 4096x8192 bf16 builds its full tile grid") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  const KernelShapes shapes =
      checkShapes(spec, {{"lhsT", {4096, 4096}}, {"rhs", {4096, 8192}}}, params);
  const auto program = buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{});
  int64_t matmuls = 0;
  for (const auto& inst : program.instructions)
    matmuls += inst.opcode == neuronsim::isa::Opcode::NcMatmul;
  CHECK(matmuls == 32 * 32 * 16);
}
