// Race detection: unordered overlapping accesses on different engines/queues are reported.
#include <doctest/doctest.h>

#include "sim/race/footprint.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
std::vector<std::string> races(const isa::Program& p) {
  return runTiming(p, sim::loadMachine("trn2")).races;
}
/// Checks that `p` has exactly one race and that its line names both accesses.
void checkOneRace(const isa::Program& p, const std::string& first, const std::string& second) {
  const std::vector<std::string> found = races(p);
  REQUIRE(found.size() == 1);
  CHECK(found[0].find(first) != std::string::npos);
  CHECK(found[0].find(second) != std::string::npos);
}
}  // namespace

TEST_CASE("a write and a read on two engines without a semaphore are a race naming both") {
  isa::Program p;
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 256), sbuf(0, 128, 8192, 256)));
  p.instructions.push_back(copy(Engine::Scalar, sbuf(0, 128, 16384, 64), sbuf(64, 64, 1020, 64)));
  const std::vector<std::string> r = races(p);
  REQUIRE(r.size() == 1);
  CHECK(r[0].find("instruction 0 (tensor_copy on vector) writes dst sbuf p0-127 bytes 0-1023") !=
        std::string::npos);
  CHECK(r[0].find("instruction 1 (tensor_copy on scalar) reads srcs[0] sbuf p64-127") !=
        std::string::npos);
}

TEST_CASE("the same accesses ordered by a semaphore chain are not a race") {
  isa::Program p;
  const int32_t v = addSemaphore(p, "vector");
  const int32_t g = addSemaphore(p, "gpsimd");
  Instruction w = copy(Engine::Vector, sbuf(0, 128, 0, 256), sbuf(0, 128, 8192, 256));
  signal(w, v);
  p.instructions.push_back(w);
  // Transitive: vector -> gpsimd -> scalar.
  Instruction hop = make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 32768, 4));
  waitFor(hop, v, 1);
  signal(hop, g);
  p.instructions.push_back(hop);
  Instruction r = copy(Engine::Scalar, sbuf(0, 128, 16384, 256), sbuf(0, 128, 0, 256));
  waitFor(r, g, 1);
  p.instructions.push_back(r);
  CHECK(races(p).empty());
}

TEST_CASE("waiting for an earlier signal does not order after a later one") {
  isa::Program p;
  const int32_t v = addSemaphore(p, "vector");
  Instruction first = copy(Engine::Vector, sbuf(0, 128, 40000, 64), sbuf(0, 128, 8192, 64));
  signal(first, v);
  p.instructions.push_back(first);
  Instruction second = copy(Engine::Vector, sbuf(0, 128, 0, 256), sbuf(0, 128, 8192, 256));
  signal(second, v);
  p.instructions.push_back(second);
  Instruction r = copy(Engine::Scalar, sbuf(0, 128, 16384, 256), sbuf(0, 128, 0, 256));
  waitFor(r, v, 1);  // only the first copy is ordered before it
  p.instructions.push_back(r);
  const std::vector<std::string> found = races(p);
  REQUIRE(found.size() == 1);
  CHECK(found[0].find("instruction 1 ") != std::string::npos);
  CHECK(found[0].find("instruction 2 ") != std::string::npos);
}

TEST_CASE("interleaved strided writes on two engines touch different bytes: no race") {
  isa::Program p;
  p.instructions.push_back(
      copy(Engine::Vector, sbuf(0, 128, 0, 128, Dtype::Fp32, 2), sbuf(0, 128, 8192, 128)));
  p.instructions.push_back(
      copy(Engine::Scalar, sbuf(0, 128, 4, 128, Dtype::Fp32, 2), sbuf(0, 128, 8192, 128)));
  CHECK(races(p).empty());
  // Shift the second by one element more: now they collide.
  p.instructions[1].dst.offset = 8;
  CHECK(races(p).size() == 1);
}

TEST_CASE("a DMA writing SBUF races with an engine reading it before completion") {
  isa::Program p;
  addTensor(p, "x", {128, 64});
  const int32_t q = addSemaphore(p, "q0");
  Instruction d = dma(0, Engine::Sync, sbuf(0, 128, 0, 64), hbm(0, 128, 64));
  signal(d, q, 16);
  p.instructions.push_back(d);
  Instruction use = copy(Engine::Vector, sbuf(0, 128, 4096, 64), sbuf(0, 128, 0, 64));
  p.instructions.push_back(use);
  std::vector<std::string> found = races(p);
  REQUIRE(found.size() == 1);
  CHECK(found[0].find("dma_copy on dma queue 0") != std::string::npos);
  p.instructions[1].waits.push_back({q, 16});
  CHECK(races(p).empty());
}

TEST_CASE("DMAs on different queues writing the same HBM bytes race - on one queue they do not") {
  isa::Program p;
  addTensor(p, "out", {128, 64}, Dtype::Fp32, isa::TensorKind::Output);
  p.instructions.push_back(dma(0, Engine::Sync, hbm(0, 128, 64), sbuf(0, 128, 0, 64)));
  p.instructions.push_back(
      dma(1, Engine::Scalar, hbm(0, 1, 64, Dtype::Fp32, 64 * 127), sbuf(0, 1, 0, 64)));
  CHECK(races(p).size() == 1);
  p.instructions[1].dmaQueue = 0;
  CHECK(races(p).empty());
}

TEST_CASE("a later access of the same engine to another part of a block does not hide a race") {
  isa::Program p;
  addTensor(p, "x", {128, 64});
  // Vector reads bytes 0-255 then 256-511 of the same 1 KiB shadow block.
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 8192, 64), sbuf(0, 128, 0, 64)));
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 9216, 64), sbuf(0, 128, 256, 64)));
  // A DMA overwrites bytes 0-255 with no wait for the first read.
  p.instructions.push_back(dma(0, Engine::Sync, sbuf(0, 128, 0, 64), hbm(0, 128, 64)));
  const std::vector<std::string> found = races(p);
  REQUIRE(found.size() == 1);
  CHECK(found[0].find("instruction 0 ") != std::string::npos);
  CHECK(found[0].find("instruction 2 ") != std::string::npos);
}

TEST_CASE(
    "exact overlap of row blocks: column tiles side by side are disjoint, one shared element is "
    "not") {
  // Two [4 rows x 8 cols] tiles of a [4 x 16] HBM tensor: cols 0-7 and 8-15 interleave by rows.
  const AccessPattern left = hbm(0, 4, 8, Dtype::Fp32, 0);
  AccessPattern right = hbm(0, 4, 8, Dtype::Fp32, 8);
  AccessPattern l = left, r = right;
  l.partitionStep = r.partitionStep = 16;
  CHECK_FALSE(sim::operandsOverlap(l, r));
  r.offset = 7;  // now column 7 of every row is shared
  CHECK(sim::operandsOverlap(l, r));
  CHECK(sim::operandsOverlap(r, l));
  // Strided innermost dims: even and odd elements do not overlap; even and every 4th do.
  const AccessPattern even = sbuf(0, 1, 0, 8, Dtype::Fp32, 2);
  const AccessPattern odd = sbuf(0, 1, 4, 8, Dtype::Fp32, 2);
  const AccessPattern fourth = sbuf(0, 1, 0, 4, Dtype::Fp32, 4);
  CHECK_FALSE(sim::operandsOverlap(even, odd));
  CHECK(sim::operandsOverlap(even, fourth));
  CHECK_FALSE(sim::operandsOverlap(odd, fourth));
}

TEST_CASE("a read signal does not order the signaller's own write: the waiter reading it races") {
  // vector add signals vector+1@read; the matmul waits for it and reads the add's destination,
  // which the add is still writing (effects are applied at issue, so only the race detector
  // can tell).
  isa::Program p;
  const int32_t v = addSemaphore(p, "vector");
  Instruction add =
      make(Opcode::TensorTensor, Engine::Vector, sbuf(0, 128, 0, 128, Dtype::Bf16),
           {sbuf(0, 128, 8192, 128, Dtype::Bf16), sbuf(0, 128, 16384, 128, Dtype::Bf16)});
  add.op0 = isa::AluOp::Add;
  signal(add, v, 1, isa::SignalAt::Read);
  p.instructions.push_back(add);
  Instruction mm = matmul(psum(0, 128, 0, 512), sbuf(0, 128, 0, 128, Dtype::Bf16),
                          sbuf(0, 128, 24576, 512, Dtype::Bf16));
  waitFor(mm, v, 1);
  p.instructions.push_back(mm);
  checkOneRace(p, "instruction 0 (tensor_tensor on vector) writes dst",
               "instruction 1 (nc_matmul on tensor) reads srcs[0]");
  // Signalled at completion, the same wait orders them.
  p.instructions[0].signals[0].at = isa::SignalAt::Complete;
  CHECK(races(p).empty());
}

TEST_CASE("a read signal still orders what the signaller did before it") {
  isa::Program p;
  const int32_t v = addSemaphore(p, "vector");
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 64), sbuf(0, 128, 8192, 64)));
  Instruction second = copy(Engine::Vector, sbuf(0, 128, 4096, 64), sbuf(0, 128, 12288, 64));
  signal(second, v, 1, isa::SignalAt::Read);
  p.instructions.push_back(second);
  Instruction reader = copy(Engine::Scalar, sbuf(0, 128, 16384, 64), sbuf(0, 128, 0, 64));
  waitFor(reader, v, 1);
  p.instructions.push_back(reader);
  CHECK(races(p).empty());  // the first copy's write is ordered by the second's @read
}

TEST_CASE("DMA loads signalling @read: a waiter touching the destination races") {
  isa::Program p;
  addTensor(p, "x", {128, 64});
  const int32_t q = addSemaphore(p, "q0");
  Instruction first = dma(0, Engine::Sync, sbuf(0, 128, 0, 64), hbm(0, 128, 64));
  signal(first, q, 1, isa::SignalAt::Read);
  p.instructions.push_back(first);
  // A second load on another queue waits for the first's @read and overwrites the same bytes.
  Instruction second = dma(1, Engine::Scalar, sbuf(0, 128, 0, 64), hbm(0, 128, 64));
  waitFor(second, q, 1);
  p.instructions.push_back(second);
  checkOneRace(p, "instruction 0 (dma_copy on dma queue 0) writes dst",
               "instruction 1 (dma_copy on dma queue 1) writes dst");
  // A compute reader released by the @read races too.
  p.instructions.pop_back();
  Instruction use = copy(Engine::Vector, sbuf(0, 128, 4096, 64), sbuf(0, 128, 0, 64));
  waitFor(use, q, 1);
  p.instructions.push_back(use);
  CHECK(races(p).size() == 1);
  p.instructions[0].signals[0].at = isa::SignalAt::Complete;
  CHECK(races(p).empty());
}

TEST_CASE("a step-0 operand of billions of elements is checked exactly, by its distinct bytes") {
  // Two [65535 x 65535] step-0 walks each touch one element; 2^32 elements would be beyond any
  // element-by-element walk.
  AccessPattern a = sbuf(0, 1, 0, 1);
  a.dims = {{0, 65535}, {0, 65535}};
  AccessPattern b = a;
  b.offset = 4;
  CHECK_FALSE(sim::operandsOverlap(a, b));
  b.offset = 0;
  CHECK(sim::operandsOverlap(a, b));
  // Negative and merged dims: [4 x 8] walked backwards rows covers bytes 0-127 once.
  AccessPattern rows = sbuf(0, 1, 96, 8);
  rows.dims = {{-8, 4}, {1, 8}};
  AccessPattern last = sbuf(0, 1, 124, 1);
  CHECK(sim::operandsOverlap(rows, last));
  last.offset = 128;
  CHECK_FALSE(sim::operandsOverlap(rows, last));
}

TEST_CASE(
    "strided HBM rows are checked in the buckets each row reaches, far rows and edges included") {
  // out is [128 x 65536] fp32: a row is 256 KiB (16 shadow buckets); column block c0..c0+63 of
  // every row touches one bucket per row, 128 of the 2,048 its bounding range spans.
  const int64_t cols = 65536, c0 = 3 * 4096;
  const auto columnBlock = [&](int64_t first, int64_t width) {
    AccessPattern a = hbm(0, 128, width, Dtype::Fp32, first);
    a.partitionStep = cols;
    return a;
  };
  const auto rowStore = [&](int64_t row, int64_t first, int64_t width) {
    return dma(1, Engine::Scalar, hbm(0, 1, width, Dtype::Fp32, row * cols + first),
               sbuf(0, 1, 0, width));
  };
  const auto program = [&](AccessPattern block, Instruction other) {
    isa::Program p;
    addTensor(p, "out", {128, cols}, Dtype::Fp32, isa::TensorKind::Output);
    p.instructions.push_back(dma(0, Engine::Sync, block, sbuf(0, 128, 0, block.dims[0].num)));
    p.instructions.push_back(std::move(other));
    return p;
  };
  // Row 100 overlaps the block's last 32 columns: a race on another queue.
  CHECK(races(program(columnBlock(c0, 64), rowStore(100, c0 + 32, 64))).size() == 1);
  // The next 64 columns of row 100 share the bucket but no byte.
  CHECK(races(program(columnBlock(c0, 64), rowStore(100, c0 + 64, 64))).empty());
  // A block straddling a bucket edge (c0 - 32 .. c0 + 31): the part after the edge still races.
  CHECK(races(program(columnBlock(c0 - 32, 64), rowStore(77, c0 + 16, 1))).size() == 1);
  CHECK(races(program(columnBlock(c0 - 32, 64), rowStore(77, c0 - 33, 4))).size() == 1);
  CHECK(races(program(columnBlock(c0 - 32, 64), rowStore(77, c0 + 32, 8))).empty());
  // Row 0 and the last row, at the block's first column.
  CHECK(races(program(columnBlock(c0, 64), rowStore(0, c0, 1))).size() == 1);
  CHECK(races(program(columnBlock(c0, 64), rowStore(127, c0, 1))).size() == 1);
}
