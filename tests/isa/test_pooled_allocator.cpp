// The program pool (isa/pooled_allocator.h): blocks are aligned, disjoint and kept intact,
// freed blocks are reused, the ISA's vectors and boxes use it, threads may free each other's
// blocks and exit, and a forked child can allocate while other threads use the pool.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "isa/instruction.h"
#include "isa/pooled_allocator.h"

using namespace neuronsim::isa;

namespace {

struct Block {
  unsigned char* p;
  size_t bytes;
};

/// `count` blocks of sizes 1..600 (past the pooled maximum), each filled with its own byte.
std::vector<Block> allocateMany(size_t count, size_t seed) {
  std::vector<Block> blocks;
  for (size_t i = 0; i < count; ++i) {
    const size_t bytes = 1 + (i * 37 + seed * 11) % 600;
    auto* p = static_cast<unsigned char*>(allocatePooled(bytes));
    std::memset(p, static_cast<int>((i + seed) & 0xff), bytes);
    blocks.push_back({p, bytes});
  }
  return blocks;
}

void checkIntactAndFree(const std::vector<Block>& blocks, size_t seed) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const auto fill = static_cast<unsigned char>((i + seed) & 0xff);
    CHECK(std::all_of(b.p, b.p + b.bytes, [&](unsigned char v) { return v == fill; }));
    freePooled(b.p, b.bytes);
  }
}

}  // namespace

TEST_CASE("pooled blocks are aligned to 16 and disjoint, and keep their contents") {
  std::vector<Block> blocks = allocateMany(5000, 1);
  for (const Block& b : blocks) CHECK(reinterpret_cast<uintptr_t>(b.p) % 16 == 0);
  std::vector<Block> sorted = blocks;
  std::sort(sorted.begin(), sorted.end(), [](const Block& a, const Block& b) { return a.p < b.p; });
  for (size_t i = 1; i < sorted.size(); ++i)
    CHECK(sorted[i - 1].p + sorted[i - 1].bytes <= sorted[i].p);
  checkIntactAndFree(blocks, 1);
}

TEST_CASE("a freed block of the same size class is reused first") {
  if (!kPoolOn) return;  // AddressSanitizer: operator new decides
  void* a = allocatePooled(40);
  freePooled(a, 40);
  CHECK(allocatePooled(48) == a);  // 40 and 48 bytes share the 48-byte class
  freePooled(a, 48);
  void* big = allocatePooled(kPooledMaxBytes + 1);
  freePooled(big, kPooledMaxBytes + 1);
}

TEST_CASE("the ISA's vectors and optional operands come from the pool") {
  if (!kPoolOn) return;
  const Dim* dims = nullptr;
  const AccessPattern* srcs = nullptr;
  const SemWait* waits = nullptr;
  const SemSignal* signals = nullptr;
  const AccessPattern* bias = nullptr;
  {
    Instruction inst;
    inst.dst.dims = {{1, 64}, {64, 2}, {128, 3}};  // 48 bytes
    inst.srcs.resize(2);                           // 2 x sizeof(AccessPattern)
    inst.waits = {{1, 2}, {3, 4}};
    inst.signals = {{0, SignalAt::Complete, 1}};
    inst.bias = AccessPattern{};
    dims = inst.dst.dims.data();
    srcs = inst.srcs.data();
    waits = inst.waits.data();
    signals = inst.signals.data();
    bias = &*inst.bias;
  }
  // The instruction's blocks went back to this thread's free lists, newest first per class.
  auto reused = [](const void* block, size_t bytes) {
    void* again = allocatePooled(bytes);
    freePooled(again, bytes);
    return again == block;
  };
  CHECK(reused(dims, 3 * sizeof(Dim)));
  CHECK(reused(waits, 2 * sizeof(SemWait)));
  CHECK(reused(signals, sizeof(SemSignal)));
  CHECK(reused(srcs, 2 * sizeof(AccessPattern)));
  CHECK(reused(bias, sizeof(AccessPattern)));
}

TEST_CASE("threads free each other's blocks and hand their pool over when they exit") {
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<Block>> made(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < made.size(); ++t)
      threads.emplace_back([&made, t] {
        std::vector<Block> mine = allocateMany(3000, t);
        checkIntactAndFree({mine.begin(), mine.begin() + 1000}, t);  // refills its own lists
        made[t] = allocateMany(2000, t + 10);
        std::vector<Block> rest(mine.begin() + 1000, mine.end());
        for (size_t i = 0; i < rest.size(); ++i) {  // still intact after the frees above
          const auto fill = static_cast<unsigned char>((i + 1000 + t) & 0xff);
          CHECK(std::all_of(rest[i].p, rest[i].p + rest[i].bytes,
                            [&](unsigned char v) { return v == fill; }));
          freePooled(rest[i].p, rest[i].bytes);
        }
      });
    for (std::thread& th : threads) th.join();
    for (size_t t = 0; t < made.size(); ++t) checkIntactAndFree(made[t], t + 10);
  }
}

TEST_CASE("a child forked while other threads hand their pools over can allocate") {
  // Each churning thread fills its free lists, then hands them over under the pool's lock as
  // it exits; a child forked meanwhile would inherit that lock held, and its first thread to
  // allocate would wait for it forever (the alarm ends such a child).
  if (!kPoolOn) return;  // AddressSanitizer: its allocator's locks, not the pool's, are forked
  std::atomic<bool> stop{false};
  std::thread churn([&stop] {
    while (!stop) {
      std::thread([] {
        std::vector<void*> blocks(100000);
        for (void*& b : blocks) b = allocatePooled(16);
        for (void* b : blocks) freePooled(b, 16);
      }).join();
    }
  });
  int stuck = 0;
  for (int i = 0; i < 40; ++i) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      alarm(3);
      std::thread([] { freePooled(allocatePooled(16), 16); }).join();
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++stuck;
  }
  stop = true;
  churn.join();
  CHECK(stuck == 0);
}
