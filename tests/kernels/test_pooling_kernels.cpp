// The four pooling kernels against their references on a table of shapes, both dtypes.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "isa/error.h"
#include "test_pooling_check.h"

using neuronsim::isa::Dtype;
using neuronsim::kernels::pooling_testing::checkPoolCase;
using neuronsim::kernels::pooling_testing::PoolCase;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

Params window(const std::string& k, const std::string& s, const std::string& p,
              const std::string& dataFormat = "NCDHW", const std::string& outputFormat = "") {
  Params params{{"kernel_size", k}, {"padding", p}, {"data_format", dataFormat}};
  if (!s.empty()) params.push_back({"stride", s});
  if (!outputFormat.empty()) params.push_back({"output_format", outputFormat});
  return params;
}

/// Shapes every pooling kernel is checked on (inputs in data_format layout).
const std::vector<PoolCase>& poolCases() {
  static const std::vector<PoolCase> cases = {
      {"channels 1", {1, 1, 4, 4, 4}, window("2", "", "0")},
      {"default-like", {2, 16, 8, 8, 8}, window("2", "", "0")},
      {"channels 130", {1, 130, 4, 4, 4}, window("2", "", "0")},
      {"B*C=150, k3 s2 p1", {3, 50, 5, 6, 7}, window("3", "2", "1")},
      {"stride < kernel, uneven padding", {1, 4, 7, 9, 8}, window("3,2,3", "1,1,2", "1,0,1")},
      {"stride > kernel", {2, 3, 9, 10, 11}, window("2", "3", "0,1,1")},
      {"mixed per axis", {1, 5, 6, 7, 8}, window("2,3,1", "3,1,2", "1,1,0")},
      {"NDHWC", {2, 5, 6, 7, 6}, window("2", "", "0", "NDHWC")},
      {"NDHWC -> NCDHW", {2, 5, 6, 7, 6}, window("3", "2", "1", "NDHWC", "NCDHW")},
      {"NCDHW -> NDHWC, C=70", {1, 70, 4, 5, 6}, window("2", "1", "1", "NCDHW", "NDHWC")},
      {"NDHWC C=130", {1, 3, 4, 5, 130}, window("2", "", "0", "NDHWC")},
      {"NDHWC B*C=150 -> NCDHW", {3, 4, 4, 4, 50}, window("2", "1", "1", "NDHWC", "NCDHW")},
      {"identity k1", {1, 3, 3, 3, 3}, window("1", "", "0")},
      {"k4 s4 p2", {1, 2, 8, 8, 8}, window("4", "", "2")},
      {"W extent 1", {1, 2, 4, 5, 1}, window("2,2,1", "", "0")},
      {"odd k3 s(2,1,2) p1", {2, 7, 11, 3, 5}, window("3", "2,1,2", "1")},
      {"stride 5 gaps", {1, 3, 10, 10, 10}, window("2", "5", "0")},
      {"window = whole input", {1, 4, 3, 4, 5}, window("3,4,5", "1", "0")},
      {"same k3 s1 p1", {2, 9, 6, 6, 6}, window("3", "1", "1")},
      {"k2 s2 p1", {1, 16, 7, 7, 7}, window("2", "", "1")},
      {"NDHWC B*C=160", {4, 4, 4, 4, 40}, window("2", "", "0", "NDHWC", "NDHWC")},
      {"k2 s1 p0 long W", {1, 2, 2, 3, 40}, window("2", "1", "0")},
  };
  return cases;
}

void checkAll(const std::string& kernel, Dtype dtype) {
  const auto machine = neuronsim::sim::loadMachine("trn2");
  uint64_t seed = 1;
  for (const PoolCase& c : poolCases()) checkPoolCase(kernel, c, dtype, machine, seed++);
}

/// Planes larger than the (reduced) SBUF: D chunked (8 KiB), then D and H chunked (3 KiB). In
/// the channels layout (whole planes per partition) the planner must cut them into more DMAs
/// than on trn2's SBUF at 3 KiB; in the automatic layout the results are checked.
void checkChunked(const std::string& kernel, Dtype dtype) {
  const std::vector<PoolCase> cases = {
      {"chunked k2", {1, 3, 12, 12, 12}, window("2", "", "0")},
      {"chunked k3 s2 p1 NDHWC", {2, 11, 13, 12, 3}, window("3", "2", "1", "NDHWC", "NCDHW")},
      {"chunked k3 s1 p1", {1, 2, 10, 14, 9}, window("3", "1", "1")},
      {"chunked k2 s3", {1, 2, 14, 10, 9}, window("2", "3", "1,0,1")},
  };
  const auto full = neuronsim::sim::loadMachine("trn2");
  for (int64_t bytes : {8 * 1024, 3 * 1024}) {
    auto machine = full;
    machine.geometry.sbufPartitionBytes = bytes;
    uint64_t seed = 7;
    for (const PoolCase& c : cases) {
      checkPoolCase(kernel, c, dtype, machine, seed);
      PoolCase channels = c;
      channels.label += ", channels layout";
      channels.params.push_back({"layout", "channels"});
      INFO(kernel << " " << channels.label << ", SBUF " << bytes << " B per partition");
      const int64_t dmas = poolDmaCount(kernel, channels, dtype, machine);
      const int64_t wholePlanes = poolDmaCount(kernel, channels, dtype, full);
      if (bytes == 3 * 1024)
        CHECK(dmas > wholePlanes);  // no plane of these cases fits 3 KiB with its buffers
      else
        CHECK(dmas >= wholePlanes);
      checkPoolCase(kernel, channels, dtype, machine, seed++);
    }
  }
}

}  // namespace

TEST_CASE("avg_pooling_3d_backward fp32: shape table") {
  checkAll("avg_pooling_3d_backward", Dtype::Fp32);
}
TEST_CASE("avg_pooling_3d_backward bf16: shape table") {
  checkAll("avg_pooling_3d_backward", Dtype::Bf16);
}
TEST_CASE("avg_pooling_3d_backward: planes larger than SBUF") {
  checkChunked("avg_pooling_3d_backward", Dtype::Fp32);
  checkChunked("avg_pooling_3d_backward", Dtype::Bf16);
}

TEST_CASE("max_pooling_3d_backward fp32: shape table") {
  checkAll("max_pooling_3d_backward", Dtype::Fp32);
}
TEST_CASE("max_pooling_3d_backward bf16: shape table") {
  checkAll("max_pooling_3d_backward", Dtype::Bf16);
}
TEST_CASE("max_pooling_3d_backward: planes larger than SBUF") {
  checkChunked("max_pooling_3d_backward", Dtype::Fp32);
  checkChunked("max_pooling_3d_backward", Dtype::Bf16);
}

TEST_CASE("avg_pooling_3d fp32: shape table") {
  checkAll("avg_pooling_3d", Dtype::Fp32);
}
TEST_CASE("avg_pooling_3d bf16: shape table") {
  checkAll("avg_pooling_3d", Dtype::Bf16);
}
TEST_CASE("avg_pooling_3d: planes larger than SBUF") {
  checkChunked("avg_pooling_3d", Dtype::Fp32);
  checkChunked("avg_pooling_3d", Dtype::Bf16);
}

TEST_CASE("max_pooling_3d fp32: shape table") {
  checkAll("max_pooling_3d", Dtype::Fp32);
}
TEST_CASE("max_pooling_3d bf16: shape table") {
  checkAll("max_pooling_3d", Dtype::Bf16);
}
TEST_CASE("max_pooling_3d: planes larger than SBUF") {
  checkChunked("max_pooling_3d", Dtype::Fp32);
  checkChunked("max_pooling_3d", Dtype::Bf16);
}

TEST_CASE("pooling: planes whose steps exceed int16 and rows whose counts exceed uint16") {
  const auto machine = neuronsim::sim::loadMachine("trn2");
  for (const std::string kernel :
       {"avg_pooling_3d_backward", "max_pooling_3d_backward", "avg_pooling_3d", "max_pooling_3d"}) {
    checkPoolCase(kernel, {"H*W = 40000", {1, 2, 3, 200, 200}, window("2", "", "0")}, Dtype::Fp32,
                  machine, 11);
    checkPoolCase(kernel, {"W = 70000", {1, 1, 1, 1, 70000}, window("1,1,3", "1,1,2", "0,0,1")},
                  Dtype::Fp32, machine, 12);
  }
}

TEST_CASE("max pooling kernels: NaN and Inf inputs follow PyTorch") {
  // A window holding a NaN has maximum NaN and its gradient goes to its last NaN.
  auto machine = neuronsim::sim::loadMachine("trn2");
  const std::vector<PoolCase> cases = {
      {"k3 s1 p1", {1, 3, 6, 5, 7}, window("3", "1", "1")},
      {"k2 s2", {2, 5, 6, 6, 6}, window("2", "", "0")},
      {"k3 s2 p1 NDHWC -> NCDHW", {2, 5, 7, 6, 9}, window("3", "2", "1", "NDHWC", "NCDHW")},
      {"B*C=150 k(2,3,1) s(1,2,1)", {3, 50, 4, 5, 6}, window("2,3,1", "1,2,1", "1,1,0")},
  };
  uint64_t seed = 40;
  for (const std::string kernel : {"max_pooling_3d_backward", "max_pooling_3d"}) {
    for (const PoolCase& c : cases) {
      for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
        checkPoolCase(kernel, c, dtype, machine, ++seed, 8);
    }
  }
  machine.geometry.sbufPartitionBytes = 3 * 1024;
  checkPoolCase("max_pooling_3d_backward",
                {"chunked k3 s1 p1", {1, 2, 10, 14, 9}, window("3", "1", "1")}, Dtype::Fp32,
                machine, 50, 6);
}

TEST_CASE("pooling backward: NaN and Inf in grad_output reach only the chosen inputs") {
  // Max backward copies a window's gradient under a predicate (never multiplies a mask by it),
  // so an Inf gradient leaves the window's other inputs at 0, not NaN.
  auto machine = neuronsim::sim::loadMachine("trn2");
  const std::vector<PoolCase> cases = {
      {"k2 s2", {2, 5, 6, 6, 6}, window("2", "", "0")},
      {"k3 s1 p1", {1, 3, 6, 5, 7}, window("3", "1", "1")},
      {"k2 s3 p1 NDHWC", {1, 5, 7, 8, 6}, window("2", "3", "1", "NDHWC")},
  };
  uint64_t seed = 60;
  for (const std::string kernel : {"max_pooling_3d_backward", "avg_pooling_3d_backward"}) {
    for (const PoolCase& c : cases) {
      for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
        checkPoolCase(kernel, c, dtype, machine, ++seed, kernel[0] == 'm' ? 10 : 0, 5);
    }
  }
}

TEST_CASE("max_pooling_3d_backward: schedule parameters change the program, not the result") {
  const auto machine = neuronsim::sim::loadMachine("trn2");
  const PoolCase base{"k2 s2 B*C=3", {1, 3, 8, 6, 10}, window("2", "", "0")};
  const std::vector<Params> schedules = {
      {{"gpsimd_share", "0"}}, {{"gpsimd_share", "100"}}, {{"gpsimd_share", "37"}},
      {{"key_ring", "1"}},     {{"key_ring", "16"}},      {{"buffers", "1"}},
      {{"buffers", "4"}},      {{"chunks", "3"}},         {{"load_queues", "1"}},
      {{"store_queues", "8"}},
  };
  uint64_t seed = 70;
  for (const Params& extra : schedules) {
    for (const PoolCase& c :
         {base, PoolCase{"k3 s1 p1 B*C=130", {2, 65, 5, 4, 6}, window("3", "1", "1")}}) {
      PoolCase withSchedule = c;
      for (const auto& p : extra) withSchedule.params.push_back(p);
      withSchedule.label += " " + extra[0].first + "=" + extra[0].second;
      checkPoolCase("max_pooling_3d_backward", withSchedule, Dtype::Fp32, machine, ++seed, 9);
    }
  }
}

TEST_CASE("pooling kernels: loads and stores split a machine with fewer DMA queues") {
  const auto machine = neuronsim::sim::loadMachine("trn2", {"dma_queues=8"});
  const PoolCase c{"k2 s2 B*C=3", {1, 3, 8, 6, 10}, window("2", "", "0")};
  uint64_t seed = 90;
  for (const char* kernel :
       {"avg_pooling_3d", "max_pooling_3d", "avg_pooling_3d_backward", "max_pooling_3d_backward"}) {
    checkPoolCase(kernel, c, Dtype::Fp32, machine, ++seed, kernel[0] == 'm' ? 10 : 0);
    PoolCase given = c;
    given.params.push_back({"store_queues", "4"});
    given.params.push_back({"load_queues", "4"});
    checkPoolCase(kernel, given, Dtype::Fp32, machine, ++seed, kernel[0] == 'm' ? 10 : 0);
  }
}

TEST_CASE("max_pooling_3d_backward: planner paths") {
  using neuronsim::isa::Space;
  using neuronsim::kernels::pooling_testing::hasAllocation;
  using neuronsim::kernels::pooling_testing::poolAllocations;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  // Disjoint windows on stride-aligned chunks: grad_input reuses the input buffer, of which
  // there is one more than buffer sets (a store holds it); the predicated copies write a PSUM
  // zero and fp32 compares read output_tensor from PSUM.
  const PoolCase disjoint{"k2 s2", {1, 4, 8, 8, 8}, window("2", "", "0")};
  auto records = poolAllocations("max_pooling_3d_backward", disjoint, Dtype::Fp32, machine);
  CHECK_FALSE(hasAllocation(records, "gin0", Space::Sbuf));
  CHECK(hasAllocation(records, "in2", Space::Sbuf));
  CHECK(hasAllocation(records, "zero", Space::Psum));
  CHECK(hasAllocation(records, "ot_psum0", Space::Psum));
  CHECK(hasAllocation(records, "last_psum0", Space::Psum));
  CHECK_FALSE(hasAllocation(records, "pick0_0", Space::Psum));
  checkPoolCase("max_pooling_3d_backward", disjoint, Dtype::Fp32, machine, 80, 7, 9);
  // bf16 compares stream at N in the performance mode: output_tensor stays in SBUF.
  records = poolAllocations("max_pooling_3d_backward", disjoint, Dtype::Bf16, machine);
  CHECK_FALSE(hasAllocation(records, "ot_psum0", Space::Psum));
  // Inputs past the last window (odd extents) are still loaded by their chunk: reused too.
  const PoolCase tail{"k2 s2 odd", {1, 3, 7, 5, 9}, window("2", "", "0")};
  records = poolAllocations("max_pooling_3d_backward", tail, Dtype::Fp32, machine);
  CHECK_FALSE(hasAllocation(records, "gin0", Space::Sbuf));
  checkPoolCase("max_pooling_3d_backward", tail, Dtype::Bf16, machine, 81, 7, 9);
  // Padding shifts windows off the stride-aligned cuts: a chunk then loads inputs it does not
  // own, so grad_input gets its own buffer (and the inputs no extra one).
  PoolCase padded{"k2 s2 p1 odd, 3 chunks", {1, 3, 15, 16, 17}, window("2", "", "1")};
  padded.params.push_back({"chunks", "3"});
  records = poolAllocations("max_pooling_3d_backward", padded, Dtype::Fp32, machine);
  CHECK(hasAllocation(records, "gin0", Space::Sbuf));
  CHECK_FALSE(hasAllocation(records, "in2", Space::Sbuf));
  checkPoolCase("max_pooling_3d_backward", padded, Dtype::Bf16, machine, 83, 7, 9);
  // Overlapping windows accumulate: picks in PSUM and a sum buffer per pick.
  const PoolCase overlapping{"k3 s2", {1, 3, 9, 7, 5}, window("3", "2", "0")};
  records = poolAllocations("max_pooling_3d_backward", overlapping, Dtype::Fp32, machine);
  CHECK(hasAllocation(records, "gin0", Space::Sbuf));
  CHECK(hasAllocation(records, "sum0_0", Space::Sbuf));
  CHECK(hasAllocation(records, "pick0_0", Space::Psum));
  // Output boxes too large for PSUM keep output_tensor and the last NaN in SBUF (k1: as many
  // outputs as inputs).
  PoolCase large{"k1 large plane", {1, 2, 4, 64, 64}, window("1", "", "0")};
  large.params.push_back({"layout", "channels"});  // whole planes (slabs would fit PSUM)
  records = poolAllocations("max_pooling_3d_backward", large, Dtype::Fp32, machine);
  CHECK_FALSE(hasAllocation(records, "ot_psum0", Space::Psum));
  CHECK_FALSE(hasAllocation(records, "last_psum0", Space::Psum));
  checkPoolCase("max_pooling_3d_backward", large, Dtype::Fp32, machine, 82, 7, 9);
}

TEST_CASE("max_pooling_3d_backward: work items split into lanes where GpSimd's lane pays") {
  using neuronsim::kernels::pooling_testing::poolProgram;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  auto gpsimdInstructions = [&](const PoolCase& c) {
    int64_t n = 0;
    for (const auto& inst :
         poolProgram("max_pooling_3d_backward", c, Dtype::Fp32, machine).instructions)
      n += inst.engine == neuronsim::isa::Engine::GpSimd ? 1 : 0;
    return n;
  };
  // 2x64x18x63x63 k3: 6 items of 1x21x21 outputs (441, under the former 512-output rule), 27
  // taps each. Split, GpSimd compares and accumulates a lane: 3 instructions per tap and item.
  const PoolCase row{"18x63x63 k3", {2, 64, 18, 63, 63}, window("3", "", "0")};
  CHECK(gpsimdInstructions(row) >= 6 * 3 * 27);
  // The default shape's items (2x8x8 outputs, a 32-output GpSimd lane) stay one VectorE lane,
  // unless the share is given.
  PoolCase small{"default k2", {2, 64, 16, 16, 16}, window("2", "", "0")};
  const int64_t oneLane = gpsimdInstructions(small);
  CHECK(oneLane < 3 * 8);
  small.params.push_back({"gpsimd_share", "25"});
  CHECK(gpsimdInstructions(small) >= 4 * 3 * 8);
  // Small items that split automatically (k3, 1x16x16 outputs among others): bit-exact.
  PoolCase split{"items of up to 256 outputs", {1, 128, 3, 48, 48}, window("3", "", "0")};
  split.params.push_back({"layout", "channels"});
  split.params.push_back({"chunks", "1"});
  CHECK(gpsimdInstructions(split) >= 3 * 27);
  checkPoolCase("max_pooling_3d_backward", split, Dtype::Fp32, machine, 84, 7, 9);
  checkPoolCase("max_pooling_3d_backward", split, Dtype::Bf16, machine, 85);
}

TEST_CASE("max_pooling_3d_backward: engines overlap across the sweeps, scatter and stores") {
  using neuronsim::isa::Engine;
  using neuronsim::isa::Opcode;
  using neuronsim::isa::Space;
  using neuronsim::kernels::pooling_testing::poolProgram;
  auto simulated = [](const neuronsim::isa::Program& program,
                      const neuronsim::sim::MachineConfig& machine) {
    neuronsim::sim::SimOptions options;
    options.timingOnly = true;
    options.detectRaces = false;
    return neuronsim::sim::simulate(program, machine, nullptr, options).totals.total.ns();
  };
  // Default k3 s1 p1 on trn1 takes a ring of 2 keys: the next unit's compare runs while
  // ScalarE weighs (a ring of 1 cannot), 1071.7 against 959.0 us; both compared on the same
  // lanes. Comparing in lockstep with the weights made ring 2 only 1.3 % faster.
  const auto trn1 = neuronsim::sim::loadMachine("trn1");
  PoolCase padded{"default k3 s1 p1", {2, 64, 16, 16, 16}, window("3", "1", "1")};
  padded.params.push_back({"gpsimd_share", "100"});
  PoolCase ring1 = padded, ring2 = padded;
  ring1.params.push_back({"key_ring", "1"});
  ring2.params.push_back({"key_ring", "2"});
  CHECK(simulated(poolProgram("max_pooling_3d_backward", ring2, Dtype::Fp32, trn1), trn1) <
        0.95 * simulated(poolProgram("max_pooling_3d_backward", ring1, Dtype::Fp32, trn1), trn1));
  checkPoolCase(
      "max_pooling_3d_backward",
      PoolCase{"odd k3 s1 p1 ring 2",
               {1, 3, 5, 7, 9},
               {{"kernel_size", "3"}, {"stride", "1"}, {"padding", "1"}, {"key_ring", "2"}}},
      Dtype::Fp32, trn1, 91, 7, 9);
  // Disjoint windows on trn2: each item's store is triggered on ScalarE after the next item's
  // output_tensor reached PSUM (so it never holds up that item's compares), and each item's
  // first scatter predicate runs on VectorE (bf16 tensor_scalar in the performance mode).
  const auto trn2 = neuronsim::sim::loadMachine("trn2");
  const PoolCase disjoint{"2x64x8x32x32 k2", {2, 64, 8, 32, 32}, window("2", "", "0")};
  const auto program = poolProgram("max_pooling_3d_backward", disjoint, Dtype::Fp32, trn2);
  int64_t psumCopies = 0, vectorPredicates = 0;
  std::vector<int64_t> copiesBeforeStore;
  for (const auto& inst : program.instructions) {
    if (inst.engine == Engine::Scalar && inst.opcode == Opcode::TensorCopy &&
        inst.dst.space == Space::Psum)
      ++psumCopies;
    if (inst.engine == Engine::Scalar && inst.opcode == Opcode::DmaCopy &&
        inst.dst.space == Space::Hbm)
      copiesBeforeStore.push_back(psumCopies);
    if (inst.engine == Engine::Vector && inst.opcode == Opcode::TensorScalar &&
        inst.op0 == neuronsim::isa::AluOp::Add)
      ++vectorPredicates;
  }
  REQUIRE(psumCopies >= 4);
  REQUIRE(copiesBeforeStore.size() == static_cast<size_t>(psumCopies));
  for (size_t i = 0; i + 1 < copiesBeforeStore.size(); ++i)
    CHECK(copiesBeforeStore[i] == static_cast<int64_t>(i) + 2);  // after item i + 1's copy
  CHECK(vectorPredicates == psumCopies);
  // Not on trn1, whose VectorE has no performance mode (ScalarE's N is cheaper).
  int64_t trn1Predicates = 0;
  for (const auto& inst :
       poolProgram("max_pooling_3d_backward", disjoint, Dtype::Fp32, trn1).instructions)
    if (inst.engine == Engine::Vector && inst.opcode == Opcode::TensorScalar) ++trn1Predicates;
  CHECK(trn1Predicates == 0);
}

TEST_CASE("pooling kernels: spatial layout puts D and H slabs on partitions") {
  using neuronsim::kernels::pooling_testing::allocationPartitions;
  using neuronsim::kernels::pooling_testing::poolAllocations;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  struct SpatialCase {
    PoolCase c;
    int32_t planes;   ///< B*C: the rows of the channels layout
    int32_t minRows;  ///< rows the slab layout must fill at least
    bool autoSlabs;   ///< auto picks slabs: B*C under half the partitions (NDHWC: H*W >= 512)
  };
  const std::vector<SpatialCase> cases = {
      {{"B*C=1 k2", {1, 1, 16, 6, 5}, window("2", "", "0")}, 1, 8, true},
      {{"B*C=3 k2 s3 p(0,1,0)", {1, 3, 18, 5, 7}, window("2", "3", "0,1,0")}, 3, 18, true},
      {{"NDHWC C=3 k2", {1, 12, 5, 6, 3}, window("2", "", "0", "NDHWC")}, 3, 18, false},
      {{"B*C=2 k(2,3,3) s(2,1,2) p(0,1,1)", {2, 1, 10, 7, 9}, window("2,3,3", "2,1,2", "0,1,1")},
       2,
       10,
       true},
      {{"B*C=70 D=8", {1, 70, 8, 3, 3}, window("2", "", "0")}, 70, 128, false},
      // H slabs too: D 2 x H 6, D 2 x H 5 with odd H and stride > kernel, H only (D windows
      // overlap); NDHWC cuts D only (4 slabs), and auto takes it only with H*W >= 512.
      {{"B*C=1 D4 H12 k2", {1, 1, 4, 12, 10}, window("2", "", "0")}, 1, 12, true},
      {{"B*C=1 H15 k(2,2,3) s(3,3,2) p(0,0,1)",
        {1, 1, 6, 15, 7},
        window("2,2,3", "3,3,2", "0,0,1")},
       1,
       10,
       true},
      {{"B*C=2 H slabs only k(3,2,2) s(1,2,2) p(1,0,0)",
        {1, 2, 5, 8, 6},
        window("3,2,2", "1,2,2", "1,0,0")},
       2,
       8,
       true},
      {{"NDHWC C=2 D4 H3 k2", {1, 8, 6, 5, 2}, window("2", "", "0", "NDHWC")}, 2, 8, false},
      {{"NDHWC C=2 H*W 512 k2", {1, 4, 16, 32, 2}, window("2", "", "0", "NDHWC")}, 2, 4, true},
  };
  // Each kernel with the SBUF buffer whose partitions show the layout.
  const std::vector<std::pair<std::string, std::string>> kernels = {
      {"avg_pooling_3d_backward", "go0"},
      {"max_pooling_3d_backward", "in0"},
      {"avg_pooling_3d", "in0"},
      {"max_pooling_3d", "in0"}};
  uint64_t seed = 90;
  for (const auto& [kernel, buffer] : kernels) {
    for (const SpatialCase& sc : cases) {
      const bool autoSlabs = sc.autoSlabs;  // then spatial is the same program
      for (const std::string layout : {"auto", "spatial", "channels"}) {
        if (layout == "spatial" && autoSlabs) continue;
        PoolCase c = sc.c;
        c.params.push_back({"layout", layout});
        c.label += " layout=" + layout;
        INFO(kernel << " " << c.label);
        const auto records = poolAllocations(kernel, c, Dtype::Fp32, machine);
        const bool slabs = layout == "spatial" || (layout == "auto" && autoSlabs);
        if (slabs) {
          CHECK(allocationPartitions(records, buffer) >= sc.minRows);
        } else {
          CHECK(allocationPartitions(records, buffer) == sc.planes);
        }
        // fp32 runs get NaN and Inf: in the input of max kernels, in the gradient of backward.
        const bool isMax = kernel.rfind("max", 0) == 0;
        const bool backward = kernel.find("backward") != std::string::npos;
        for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
          const bool fp32 = dtype == Dtype::Fp32;
          checkPoolCase(kernel, c, dtype, machine, ++seed, fp32 && isMax ? 9 : 0,
                        fp32 && backward ? 11 : 0);
        }
      }
    }
  }
}

TEST_CASE("pooling kernels: halo slabs for overlapping windows with few planes") {
  using neuronsim::kernels::pooling_testing::allocationPartitions;
  using neuronsim::kernels::pooling_testing::poolAllocations;
  // Expected slabs per plane (1: channels layout): the largest product Sd * Sh <= 128 / B*C,
  // D preferred on ties, of counts dividing Do and Ho (forward) or cutting D and H into
  // multiples of the stride (backward); max backward cuts H only where it is unpadded.
  struct HaloCase {
    PoolCase c;
    int32_t planes;  ///< B*C
    int32_t forwardSlabs;
    int32_t avgBackwardSlabs;
    int32_t maxBackwardSlabs;
  };
  const std::vector<HaloCase> cases = {
      {{"k3 s2 p1", {1, 1, 16, 6, 5}, window("3", "2", "1")}, 1, 8 * 3, 8 * 3, 8},
      {{"odd k3 s1 p1", {1, 1, 9, 7, 5}, window("3", "1", "1")}, 1, 9 * 7, 9 * 7, 9},
      {{"k2 s1, D 13", {1, 2, 13, 5, 6}, window("2", "1", "0")}, 2, 12 * 4, 13, 13},
      {{"k3 s2 p(1,0,1)", {1, 3, 10, 6, 7}, window("3", "2", "1,0,1")}, 3, 5 * 2, 5 * 3, 5 * 3},
      {{"B=3 k3 s1 p(0,1,1)", {3, 1, 8, 5, 5}, window("3", "1", "0,1,1")}, 3, 6 * 5, 8 * 5, 8},
      {{"k4 s2 p2, D 11 prime", {1, 1, 11, 5, 4}, window("4", "2", "2")}, 1, 6 * 3, 1, 1},
      {{"D=1 k(1,3,3) s1 p(0,1,1)", {1, 2, 1, 9, 8}, window("1,3,3", "1", "0,1,1")}, 2, 9, 9, 1},
      {{"B*C=30 k3 s1 p1", {1, 30, 12, 5, 5}, window("3", "1", "1")}, 30, 4, 4, 4},
  };
  // A plane of 4096 elements: auto takes the halo slabs.
  {
    PoolCase big{"auto k3 s2 p1 16^3", {1, 1, 16, 16, 16}, window("3", "2", "1")};
    big.params.push_back({"layout", "auto"});
    CHECK(allocationPartitions(poolAllocations("avg_pooling_3d", big, Dtype::Fp32,
                                               neuronsim::sim::loadMachine("trn2")),
                               "in0") == 8 * 8);
  }
  const std::vector<std::pair<std::string, std::string>> kernels = {
      {"avg_pooling_3d_backward", "go0"},
      {"max_pooling_3d_backward", "in0"},
      {"avg_pooling_3d", "in0"},
      {"max_pooling_3d", "in0"}};
  const auto trn2 = neuronsim::sim::loadMachine("trn2");
  auto small = trn2;  // slabs cut into chunks, edge slabs' boxes partly outside the tensor
  small.geometry.sbufPartitionBytes = 3 * 1024;
  uint64_t seed = 400;
  for (const auto& [kernel, buffer] : kernels) {
    const bool isMax = kernel.rfind("max", 0) == 0;
    const bool backward = kernel.find("backward") != std::string::npos;
    for (const HaloCase& hc : cases) {
      const int32_t slabs =
          !backward ? hc.forwardSlabs : (isMax ? hc.maxBackwardSlabs : hc.avgBackwardSlabs);
      // Planes under 4096 elements: auto keeps the channels layout (same program as channels).
      for (const std::string layout : {"spatial", "auto", "channels"}) {
        if (layout == "spatial" && slabs == 1) continue;
        PoolCase c = hc.c;
        c.params.push_back({"layout", layout});
        c.label += " layout=" + layout;
        INFO(kernel << " " << c.label);
        const auto records = poolAllocations(kernel, c, Dtype::Fp32, trn2);
        const int32_t expected = layout == "spatial" ? hc.planes * slabs : hc.planes;
        CHECK(allocationPartitions(records, buffer) == expected);
        if (layout == "auto") continue;
        for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
          const bool fp32 = dtype == Dtype::Fp32;
          checkPoolCase(kernel, c, dtype, trn2, ++seed, fp32 && isMax ? 7 : 0,
                        fp32 && backward ? 11 : 0);
        }
        if (layout == "spatial")
          checkPoolCase(kernel, c, Dtype::Fp32, small, ++seed, isMax ? 5 : 0);
      }
    }
  }
}

TEST_CASE("pooling kernels: layout spatial refuses what neither slab kind can cut") {
  using neuronsim::kernels::pooling_testing::poolAllocations;
  const auto machine = neuronsim::sim::loadMachine("trn2");
  // NDHWC: halo slabs are NCDHW only; D=1 with overlapping H windows: max backward cuts
  // halo slabs along D only.
  const PoolCase ndhwc{"NDHWC k3 s1 p1", {1, 8, 8, 8, 1}, window("3", "1", "1", "NDHWC")};
  const PoolCase flat{"D=1 k(1,3,3) p(0,1,1)", {1, 1, 1, 8, 8}, window("1,3,3", "1", "0,1,1")};
  const std::vector<std::pair<std::string, PoolCase>> refused = {{"avg_pooling_3d_backward", ndhwc},
                                                                 {"max_pooling_3d", ndhwc},
                                                                 {"max_pooling_3d_backward", flat}};
  for (const auto& [kernel, base] : refused) {
    PoolCase c = base;
    c.params.push_back({"layout", "spatial"});
    INFO(kernel << " " << c.label);
    CHECK_THROWS_WITH_AS(poolAllocations(kernel, c, Dtype::Fp32, machine),
                         doctest::Contains("layout spatial needs windows that do not overlap"),
                         neuronsim::Error);
    c.params.back().second = "auto";
    CHECK_NOTHROW(poolAllocations(kernel, c, Dtype::Fp32, machine));
  }
  PoolCase halo = flat;
  halo.params.push_back({"layout", "spatial"});
  CHECK_NOTHROW(poolAllocations("avg_pooling_3d_backward", halo, Dtype::Fp32, machine));
}

TEST_CASE("pooling kernels with a 64x32 PE array: NDHWC stores transpose 64 rows, 32 positions") {
  const auto machine = neuronsim::sim::loadMachine("trn2", {"pe_rows=64", "pe_cols=32"});
  const std::vector<PoolCase> cases = {
      {"NDHWC C=130", {1, 3, 4, 5, 130}, window("2", "", "0", "NDHWC")},
      {"NDHWC B*C=150 k3 s1 p1", {3, 4, 4, 4, 50}, window("3", "1", "1", "NDHWC")},
      {"NCDHW channels 130", {1, 130, 4, 4, 4}, window("2", "", "0")},
  };
  uint64_t seed = 220;
  for (const std::string kernel :
       {"avg_pooling_3d_backward", "max_pooling_3d_backward", "avg_pooling_3d", "max_pooling_3d"}) {
    for (const PoolCase& c : cases) checkPoolCase(kernel, c, Dtype::Fp32, machine, ++seed);
  }
}

TEST_CASE("pooling kernels on a 64-partition machine") {
  const auto machine = neuronsim::sim::loadMachine("trn2", {"partitions=64"});
  const std::vector<PoolCase> cases = {
      {"channels 130", {1, 130, 4, 4, 4}, window("2", "", "0")},
      {"B*C=150, k3 s2 p1", {3, 50, 5, 6, 7}, window("3", "2", "1")},
      {"NDHWC C=130", {1, 3, 4, 5, 130}, window("2", "", "0", "NDHWC")},
      {"NDHWC B*C=150 -> NCDHW", {3, 4, 4, 4, 50}, window("2", "1", "1", "NDHWC", "NCDHW")},
      {"B*C=1 D slabs", {1, 1, 16, 5, 7}, window("2", "", "0")},
  };
  uint64_t seed = 120;
  for (const std::string kernel :
       {"avg_pooling_3d_backward", "max_pooling_3d_backward", "avg_pooling_3d", "max_pooling_3d"}) {
    for (const PoolCase& c : cases) checkPoolCase(kernel, c, Dtype::Fp32, machine, ++seed);
  }
}

TEST_CASE("max_pooling_3d_backward: output_tensor other than the forward result, every lane kind") {
  // Windows whose output_tensor no input equals drop their gradient; a NaN output_tensor
  // takes the window's last NaN (none: dropped), -inf its first -inf input. Chained VectorE
  // lanes (unpadded), keyed lanes (padding), overlapping windows, one lane or two, on trn2 and
  // trn1 (no performance mode, a shared VectorE/GpSimd port).
  const std::vector<PoolCase> cases = {
      {"k2 s2 odd", {2, 5, 7, 9, 11}, window("2", "", "0")},
      {"k2 s2 p1", {1, 3, 6, 7, 5}, window("2", "", "1")},
      {"k3 s1 p1", {1, 3, 6, 5, 7}, window("3", "1", "1")},
      {"k(2,3,1) s(2,3,2)", {2, 3, 8, 9, 6}, window("2,3,1", "2,3,2", "0")},
      {"k2 s3 p(0,1,1) NDHWC", {1, 5, 7, 8, 6}, window("2", "3", "0,1,1", "NDHWC")},
  };
  uint64_t seed = 200;
  for (const char* name : {"trn2", "trn1"}) {
    const auto machine = neuronsim::sim::loadMachine(name);
    for (const PoolCase& base : cases) {
      for (const char* share : {"auto", "0", "45", "100"}) {
        PoolCase c = base;
        c.params.push_back({"gpsimd_share", share});
        c.label += std::string(" gpsimd_share=") + share + " on " + name;
        for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
          checkPoolCase("max_pooling_3d_backward", c, dtype, machine, ++seed, 9, 0, 4);
      }
    }
  }
}
