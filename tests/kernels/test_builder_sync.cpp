// KernelBuilder automatic semaphores: RAW/WAR/WAW across engines and queues, reuse, minimality.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "isa/error.h"
#include "kernels/builder/kernel_builder.h"
#include "test_builder_oracle.h"

using neuronsim::Error;
using neuronsim::isa::ActFn;
using neuronsim::isa::AluOp;
using neuronsim::isa::Dtype;
using neuronsim::isa::Engine;
using neuronsim::isa::Geometry;
using neuronsim::isa::Instruction;
using neuronsim::isa::Program;
using neuronsim::isa::SemWait;
using neuronsim::kernels::KernelBuilder;
using neuronsim::kernels::Tile;

namespace {

constexpr int kTensor = 0, kVector = 1, kScalar = 2, kGpSimd = 3;
constexpr int q(int queue) {
  return 5 + queue;
}

std::vector<SemWait> waitsOf(const Program& p, size_t i) {
  return p.instructions.at(i).waits;
}

}  // namespace

TEST_CASE("builder: semaphore names and one completion signal per instruction") {
  KernelBuilder b("t", Geometry{});
  Tile a = b.sbuf({128, 16}, Dtype::Fp32, "a");
  b.memset(a, 1.0f);
  b.activation(a, a, ActFn::Relu);
  auto x = b.output("x", {128, 16}, Dtype::Fp32);
  b.dmaCopy(x, a, {.queue = 3});
  Program p = b.finish();
  REQUIRE(p.semaphores.size() == 21);
  CHECK(p.semaphores[0] == "tensor");
  CHECK(p.semaphores[1] == "vector");
  CHECK(p.semaphores[2] == "scalar");
  CHECK(p.semaphores[5] == "q0");
  CHECK(p.semaphores[20] == "q15");
  REQUIRE(p.instructions.size() == 3);
  CHECK(p.instructions[0].signals.at(0).sem == kVector);
  CHECK(p.instructions[1].signals.at(0).sem == kScalar);
  CHECK(p.instructions[2].signals.at(0).sem == q(3));
  CHECK(p.instructions[2].engine == Engine::Sync);
  CHECK(p.instructions[2].dmaQueue == 3);
}

TEST_CASE("builder: RAW from a DMA queue to Vector, none within one engine") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 32}, Dtype::Fp32);
  Tile a = b.sbuf({128, 32}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 32}, Dtype::Fp32, "c");
  b.dmaCopy(a, in, {.queue = 2});
  b.tensorCopy(c, a);                      // RAW on q2
  b.tensorScalar(c, c, AluOp::Add, 1.0f);  // RAW on vector itself: no wait
  Program p = b.finish();
  CHECK(waitsOf(p, 0).empty());
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{q(2), 1}});
  CHECK(waitsOf(p, 2).empty());
}

TEST_CASE("builder: WAR and WAW across engines") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 32}, Dtype::Fp32);
  Tile a = b.sbuf({128, 32}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 32}, Dtype::Fp32, "c");
  b.memset(a, 0.0f, Engine::GpSimd);   // 0: gpsimd #1 writes a
  b.tensorCopy(c, a, Engine::Scalar);  // 1: scalar #1 reads a (RAW gpsimd)
  b.dmaCopy(a, in, {.queue = 0});      // 2: WAR on scalar (WAW gpsimd implied)
  b.memset(c, 2.0f, Engine::Vector);   // 3: WAW on scalar's write of c
  Program p = b.finish();
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{kGpSimd, 1}});
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{kScalar, 1}});
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kScalar, 1}});
}

TEST_CASE("builder: only the strongest wait per semaphore") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 64}, Dtype::Fp32);
  Tile a = b.sbuf({128, 32}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 32}, Dtype::Fp32, "c");
  Tile d = b.sbuf({128, 32}, Dtype::Fp32, "d");
  b.dmaCopy(a, in.slice(1, 0, 32), {.queue = 4});
  b.dmaCopy(c, in.slice(1, 32, 64), {.queue = 4});
  b.tensorTensor(d, a, c, AluOp::Add);
  Program p = b.finish();
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{q(4), 2}});
}

TEST_CASE("builder: waits already known are not repeated, also transitively") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 32}, Dtype::Fp32);
  Tile a = b.sbuf({128, 32}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 32}, Dtype::Fp32, "c");
  Tile d = b.sbuf({128, 32}, Dtype::Fp32, "d");
  Tile e = b.sbuf({128, 32}, Dtype::Fp32, "e");
  b.dmaCopy(a, in, {.queue = 1});                       // 0
  b.tensorCopy(c, a, Engine::Vector);                   // 1: waits q1>=1
  b.tensorCopy(d, a, Engine::Vector);                   // 2: already known
  b.tensorTensor(e, a, c, AluOp::Add, Engine::GpSimd);  // 3: vector>=1 implies q1>=1
  Program p = b.finish();
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{q(1), 1}});
  CHECK(waitsOf(p, 2).empty());
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kVector, 1}});
}

TEST_CASE("builder: disjoint partitions, disjoint bytes and disjoint HBM blocks need no waits") {
  KernelBuilder b("t", Geometry{});
  auto out = b.output("out", {128, 1024}, Dtype::Fp32);
  Tile a = b.sbuf({128, 512}, Dtype::Fp32, "a");
  b.memset(a.partitionSlice(0, 64), 1.0f, Engine::Vector);
  b.memset(a.partitionSlice(64, 64), 2.0f, Engine::GpSimd);
  b.tensorCopy(a.partitionSlice(64, 64).slice(0, 0, 256),
               a.partitionSlice(64, 64).slice(0, 256, 512), Engine::GpSimd);
  b.memset(a.partitionSlice(0, 64).slice(0, 256, 512), 3.0f,
           Engine::GpSimd);  // WAW with vector's write
  b.dmaCopy(out.slice(1, 0, 512), a, {.queue = 0});
  b.dmaCopy(out.slice(1, 512, 1024), a, {.queue = 1});  // Sync already waited for gpsimd>=3
  Program p = b.finish();
  CHECK(waitsOf(p, 1).empty());
  CHECK(waitsOf(p, 2).empty());
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kVector, 1}});
  CHECK(waitsOf(p, 4) == std::vector<SemWait>{{kGpSimd, 3}});
  CHECK(waitsOf(p, 5).empty());
}

TEST_CASE("builder: HBM RAW between queues and same-queue dependencies kept") {
  KernelBuilder b("t", Geometry{});
  auto scratch = b.internal("scratch", {128, 64}, Dtype::Fp32);
  Tile a = b.sbuf({128, 64}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 64}, Dtype::Fp32, "c");
  b.memset(a, 1.0f);
  b.dmaCopy(scratch, a, {.queue = 0});                                  // 1: waits vector>=1
  b.dmaCopy(c.slice(0, 0, 32), scratch.slice(1, 0, 32), {.queue = 5});  // 2: RAW on q0
  b.dmaCopy(scratch.slice(1, 32, 64), c.slice(0, 0, 32),
            {.queue = 5});  // 3: same queue RAW on c, WAR/WAW on scratch
  Program p = b.finish();
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{kVector, 1}});
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{q(0), 1}});
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{q(5), 1}});
}

TEST_CASE("builder: a released tile's bytes are reused only after its readers and writers") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 32}, Dtype::Fp32);
  Tile a = b.sbuf({128, 32}, Dtype::Fp32, "a");
  Tile keep = b.sbuf({128, 32}, Dtype::Fp32, "keep");
  b.dmaCopy(a, in, {.queue = 0});      // 0: q0 writes a
  b.activation(keep, a, ActFn::Copy);  // 1: scalar reads a
  b.release(a);
  Tile reused = b.sbuf({128, 32}, Dtype::Fp32, "reused");
  CHECK(reused.baseBytes() == a.baseBytes());
  b.memset(reused, 0.0f, Engine::GpSimd);  // 2: WAR scalar, WAW q0 (implied)
  Program p = b.finish();
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{kScalar, 1}});
  CHECK(neuronsim::kernels::testing::unorderedConflicts(p).empty());
}

TEST_CASE("builder: SBUF capacity error names the kernel and the bytes") {
  Geometry g;
  KernelBuilder b("mykernel", g);
  b.sbuf({128, 40000}, Dtype::Fp32, "big");  // 160000 bytes
  try {
    b.sbuf({128, 20000}, Dtype::Fp32, "more");  // 80000 bytes, 69376 left
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("mykernel") != std::string::npos);
    CHECK(msg.find("'more'") != std::string::npos);
    CHECK(msg.find("80000") != std::string::npos);
    CHECK(msg.find("69376") != std::string::npos);
  }
  CHECK_THROWS_AS(b.sbuf({129, 4}, Dtype::Fp32), Error);
}

TEST_CASE("builder: PSUM tiles stay inside one bank; a matmul output may not cross one") {
  KernelBuilder b("t", Geometry{});
  Tile p0 = b.psum({128, 256}, Dtype::Fp32);  // 1 KiB
  Tile p1 = b.psum({128, 384}, Dtype::Fp32);  // 1.5 KiB: does not fit the rest of bank 0
  Tile p2 = b.psum({128, 256}, Dtype::Fp32);  // fits after p0
  CHECK(p0.baseBytes() == 0);
  CHECK(p1.baseBytes() == 2048);
  CHECK(p2.baseBytes() == 1024);
  Tile wide = b.psum({128, 1024}, Dtype::Fp32);  // 4 KiB: two banks, bank aligned
  CHECK(wide.baseBytes() % 2048 == 0);
  Tile s = b.sbuf({128, 128}, Dtype::Bf16);
  Tile m = b.sbuf({128, 512}, Dtype::Bf16);
  CHECK_THROWS_AS(b.matmul(wide.slice(0, 256, 768), s, m, false), Error);
  for (int i = 0; i < 4; ++i) b.psum({128, 512}, Dtype::Fp32);  // banks 4..7
  CHECK_THROWS_AS(b.psum({128, 256}, Dtype::Fp32), Error);      // bank 1 has 512 bytes left
  CHECK_NOTHROW(b.psum({128, 128}, Dtype::Fp32));
  b.release(p0);
  CHECK(b.psum({128, 256}, Dtype::Fp32).baseBytes() == 0);
}

TEST_CASE("builder: random programs order every conflicting pair (oracle) and validate") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    KernelBuilder b("rand", Geometry{});
    auto hbm = b.internal("h", {128, 64}, Dtype::Fp32);
    std::vector<Tile> tiles;
    for (int i = 0; i < 4; ++i) tiles.push_back(b.sbuf({128, 64}, Dtype::Fp32));
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    auto part = [&](const Tile& t, int& p0, int& pc) {
      const int kind = pick(3);
      pc = kind == 0 ? 128 : (kind == 1 ? 64 : 32);
      p0 = pc == 128 ? 0 : pick(128 / pc) * pc;
      return t.partitionSlice(p0, pc);
    };
    for (int i = 0; i < 4; ++i) b.memset(tiles[i], 0.0f);
    for (int step = 0; step < 40; ++step) {
      const int f0 = pick(4) * 16;
      int p0 = 0, pc = 0;
      Tile dst = part(tiles[pick(4)], p0, pc).slice(0, f0, f0 + 16);
      const int g0 = pick(4) * 16;
      Tile src = tiles[pick(4)].partitionSlice(p0, pc).slice(0, g0, g0 + 16);
      switch (pick(6)) {
        case 0:
          b.dmaCopy(dst, hbm.slice(0, p0, p0 + pc).slice(1, g0, g0 + 16));
          break;
        case 1:
          b.dmaCopy(hbm.slice(0, p0, p0 + pc).slice(1, f0, f0 + 16), src);
          break;
        case 2:
          b.tensorTensor(dst, src, dst, AluOp::Add, pick(2) ? Engine::Vector : Engine::GpSimd);
          break;
        case 3:
          b.tensorCopy(dst, src, static_cast<Engine>(1 + pick(3)));
          break;
        case 4:
          b.activation(dst, src, ActFn::Copy);
          break;
        default:
          b.dmaCopy(dst, src);
          break;
      }
    }
    Program p = b.finish();
    const auto bad = neuronsim::kernels::testing::unorderedConflicts(p);
    INFO("trial " << trial);
    CHECK(bad.empty());
  }
}

TEST_CASE("builder: stays fast at 100k instructions") {
  KernelBuilder b("big", Geometry{});
  auto out = b.output("out", {128, 100000}, Dtype::Fp32);
  Tile t[4] = {b.sbuf({128, 512}, Dtype::Fp32), b.sbuf({128, 512}, Dtype::Fp32),
               b.sbuf({128, 512}, Dtype::Fp32), b.sbuf({128, 512}, Dtype::Fp32)};
  for (int i = 0; i < 50000; ++i) {
    const Tile& x = t[i % 4];
    b.memset(x.slice(0, 0, 2), static_cast<float>(i), i % 2 ? Engine::Vector : Engine::GpSimd);
    b.dmaCopy(out.slice(1, 2 * i, 2 * i + 2), x.slice(0, 0, 2));
  }
  CHECK(b.instructionCount() == 100000);
  Program p = b.finish();
  // Each memset waits only for the store that last read its tile (WAR).
  CHECK(p.instructions[8].waits.size() == 1);
}

TEST_CASE("builder: a DMA queue takes transfers from one issuing engine only") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 8}, Dtype::Fp32);
  Tile a = b.sbuf({128, 8}, Dtype::Fp32, "a");
  b.dmaCopy(a, in, {.queue = 4});
  CHECK_THROWS_WITH_AS(
      b.dmaCopy(a, in, {.queue = 4, .issue = Engine::GpSimd}),
      "t: DMA queue 4 is fed by sync, not gpsimd (a queue takes DMAs from one engine only)", Error);
  std::set<int32_t> sync, gpsimd;
  for (int i = 0; i < 24; ++i) {
    sync.insert(b.nextDmaQueue(Engine::Sync));
    gpsimd.insert(b.nextDmaQueue(Engine::GpSimd));
  }
  CHECK(sync.size() == 12);
  CHECK(gpsimd == std::set<int32_t>{14, 15});
  b.dmaCopy(a, in, {.queue = 14});  // Sync claims q14: GpSimd's round robin skips it
  for (int i = 0; i < 4; ++i) CHECK(b.nextDmaQueue(Engine::GpSimd) == 15);
  b.setDmaQueues({14}, Engine::GpSimd);
  CHECK_THROWS_WITH_AS(b.nextDmaQueue(Engine::GpSimd),
                       "t: gpsimd has no DMA queue left: its queues are all fed by other engines "
                       "(14 by sync), and a queue takes DMAs from one engine only (the machine has "
                       "16 DMA queues)",
                       Error);
}

TEST_CASE("builder: an operand outside every live tile (use after release) is an error") {
  KernelBuilder b("t", Geometry{});
  Tile a = b.sbuf({128, 8}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 8}, Dtype::Fp32, "c");
  b.memset(a, 0.0f);
  b.release(a);
  CHECK_THROWS_WITH_AS(b.tensorCopy(c, a),
                       "t: instruction 1 (tensor_copy) srcs[0] touches sbuf bytes [0, 32) outside "
                       "every live tile (used after release?)",
                       Error);
  Tile p = b.psum({128, 8}, Dtype::Fp32, "p");
  b.release(p);
  CHECK_THROWS_AS(b.memset(p, 1.0f), Error);
  CHECK_NOTHROW(b.memset(c, 1.0f));
}

TEST_CASE("builder: random strided and permuted HBM views order every conflict (oracle)") {
  std::mt19937 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}, {0, 2, 1}};
  for (int trial = 0; trial < 30; ++trial) {
    KernelBuilder b("hbm", Geometry{});
    const auto h = b.internal("h", {6, 4, 10}, Dtype::Fp32);
    std::vector<Tile> tiles;
    for (int i = 0; i < 3; ++i) tiles.push_back(b.sbuf({128, 64}, Dtype::Fp32));
    for (const Tile& t : tiles) b.memset(t, 0.0f);
    for (int step = 0; step < 30; ++step) {
      auto v = h;
      for (int axis = 0; axis < 3; ++axis) {
        const int64_t size = v.size(axis);
        v = v.slice(axis, pick(static_cast<int>(size)), size, 1 + pick(2));
      }
      v = v.permute(orders[pick(4)]);
      const Tile t = tiles[pick(3)]
                         .partitionSlice(0, static_cast<int32_t>(v.size(0)))
                         .slice(0, 0, v.size(1) * v.size(2));
      if (pick(2)) {
        b.dmaCopy(t, v);
      } else {
        b.dmaCopy(v, t);
      }
      if (pick(3) == 0)
        b.tensorScalar(tiles[pick(3)], tiles[pick(3)], AluOp::Add, 1.0f, AluOp::Bypass, 0.0f,
                       Engine::GpSimd);
    }
    Program p = b.finish();
    INFO("trial " << trial);
    CHECK(neuronsim::kernels::testing::unorderedConflicts(p).empty());
  }
}

TEST_CASE("builder: interleaved strided writes of two engines do not wait on each other") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 64}, Dtype::Fp32);
  auto out = b.output("out", {128, 64}, Dtype::Fp32);
  Tile a = b.sbuf({128, 64}, Dtype::Fp32, "a");
  b.dmaCopy(a, in, {.queue = 0});                        // 0
  b.memset(a.slice(0, 0, 64, 2), 1.0f, Engine::Vector);  // 1: even elements, WAW q0
  b.memset(a.slice(0, 1, 64, 2), 2.0f, Engine::GpSimd);  // 2: odd elements, not vector's
  b.dmaCopy(out, a, {.queue = 1});                       // 3: needs both
  b.memset(a.slice(0, 1, 32, 4), 3.0f, Engine::Vector);  // 4: 1 5 .. 29: gpsimd's, q1's read
  Program p = b.finish();
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{q(0), 1}});
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{q(0), 1}});
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kVector, 1}, {kGpSimd, 1}});
  CHECK(waitsOf(p, 4) == std::vector<SemWait>{{q(1), 1}});
}

TEST_CASE("builder: strided reads wait for the writes they read; only their bytes' writers wait") {
  KernelBuilder b("t", Geometry{});
  auto in = b.input("in", {128, 64}, Dtype::Fp32);
  Tile a = b.sbuf({128, 64}, Dtype::Fp32, "a");
  Tile c = b.sbuf({128, 32}, Dtype::Fp32, "c");
  Tile d = b.sbuf({128, 16}, Dtype::Fp32, "d");
  b.dmaCopy(a, in, {.queue = 0});                         // 0
  b.tensorCopy(c, a.slice(0, 0, 64, 2), Engine::Vector);  // 1: reads even, RAW q0
  b.memset(a.slice(0, 1, 64, 2), 5.0f, Engine::GpSimd);   // 2: odd: WAW q0, no WAR
  b.tensorCopy(a.slice(0, 0, 64, 2), c, Engine::Scalar);  // 3: even: WAR (and RAW) vector
  b.tensorCopy(d, a.slice(0, 3, 64, 4), Engine::Vector);  // 4: 3 7 ..: RAW gpsimd
  b.memset(a.slice(0, 0, 64, 4), 7.0f, Engine::GpSimd);   // 5: 0 4 ..: WAW scalar only
  Program p = b.finish();
  CHECK(waitsOf(p, 1) == std::vector<SemWait>{{q(0), 1}});
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{q(0), 1}});
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kVector, 1}});
  CHECK(waitsOf(p, 4) == std::vector<SemWait>{{kGpSimd, 1}});
  CHECK(waitsOf(p, 5) == std::vector<SemWait>{{kScalar, 1}});
}

TEST_CASE("builder: a bf16 view of fp32 bytes waits only where the bytes are shared") {
  KernelBuilder b("t", Geometry{});
  Tile a = b.sbuf({128, 64}, Dtype::Fp32, "a");
  const Tile halves(a.space(), Dtype::Bf16, 0, 128, a.baseBytes(),
                    neuronsim::kernels::StridedLayout::contiguous({128}), "halves");
  b.memset(a.slice(0, 0, 64, 2), 1.0f, Engine::Vector);        // 0: fp32 even: bytes 8k..8k+3
  b.memset(halves.slice(0, 2, 128, 4), 0.0f, Engine::GpSimd);  // 1: bytes 8k+4, 8k+5: odd fp32
  b.memset(halves.slice(0, 1, 128, 4), 0.0f, Engine::GpSimd);  // 2: bytes 8k+2, 8k+3: even's
  b.tensorCopy(halves.slice(0, 127, 128), halves.slice(0, 6, 7), Engine::Vector);  // 3
  Program p = b.finish();
  CHECK(waitsOf(p, 1).empty());
  CHECK(waitsOf(p, 2) == std::vector<SemWait>{{kVector, 1}});
  // 3 reads bf16 element 6 (gpsimd's first memset) and writes element 127, the upper half of
  // fp32 element 63 (odd: nobody wrote it).
  CHECK(waitsOf(p, 3) == std::vector<SemWait>{{kGpSimd, 1}});
}

TEST_CASE("builder: random strided, broadcast and retyped on-chip views order every conflict") {
  std::mt19937 rng(23);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int trial = 0; trial < 25; ++trial) {
    KernelBuilder b("strided", Geometry{});
    const Tile base = b.sbuf({128, 48}, Dtype::Fp32, "base");
    const Tile other = b.sbuf({128, 48}, Dtype::Fp32, "other");
    b.memset(base, 0.0f);
    b.memset(other, 0.0f);
    // A [2, 4] view: fp32 or bf16; a strided row, two rows of a column block, or broadcast.
    auto view = [&](const Tile& t, bool broadcast) {
      const bool half = pick(3) == 0;
      const Tile v = half ? Tile(t.space(), Dtype::Bf16, 0, 128, t.baseBytes(),
                                 neuronsim::kernels::StridedLayout::contiguous({96}), "h")
                          : t;
      const int64_t size = v.size(0);
      switch (pick(broadcast ? 4 : 2)) {
        case 0: {
          const int64_t step = 1 + pick(4);
          const int64_t start = pick(static_cast<int>(size - step * 7));
          return v.slice(0, start, start + step * 7 + 1, step).split(0, {2, 4});
        }
        case 1: {
          const int64_t cols = half ? 12 : 6, rows = 8, rowStep = 1 + pick(3);
          const int64_t row = pick(static_cast<int>(rows - rowStep)),
                        col = pick(static_cast<int>(cols - 3));
          return v.split(0, {rows, cols})
              .slice(0, row, row + rowStep + 1, rowStep)
              .slice(1, col, col + 4);
        }
        case 2: {
          const int64_t at = pick(static_cast<int>(size - 3));
          return v.slice(0, at, at + 4).broadcast(0, 2);
        }
        default: {
          const int64_t at = pick(static_cast<int>(size));
          return v.slice(0, at, at + 1).broadcast(0, 2).select(1, 0).broadcast(1, 4);
        }
      }
    };
    for (int step = 0; step < 40; ++step) {
      const Tile src = view(pick(4) ? base : other, true);
      const Tile dst = view(pick(2) ? base : other, false);
      const Engine engine = static_cast<Engine>(1 + pick(3));
      if (pick(3) == 0) {
        b.memset(dst, static_cast<float>(step), engine == Engine::Scalar ? Engine::GpSimd : engine);
      } else {
        b.tensorCopy(dst, src, engine);
      }
    }
    Program p = b.finish();
    INFO("trial " << trial);
    CHECK(neuronsim::kernels::testing::unorderedConflicts(p).empty());
  }
}
