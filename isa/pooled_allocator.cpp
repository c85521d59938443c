// Per-thread free lists of small blocks, carved from 2 MiB huge-page chunks.
#include "isa/pooled_allocator.h"

#include <pthread.h>

#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "isa/huge_page_allocator.h"

namespace neuronsim::isa {
namespace {

constexpr size_t kGrain = 16;
constexpr size_t kClasses = kPooledMaxBytes / kGrain;

struct FreeBlock {
  FreeBlock* next;
};

/// Blocks of class c are (c + 1) * 16 bytes.
size_t sizeClass(size_t bytes) {
  return bytes == 0 ? 0 : (bytes - 1) / kGrain;
}

/// One thread's free lists and the unused end of its current chunk. Trivially destructible:
/// it stays usable while the thread's other thread_local objects are destroyed.
struct ThreadPool {
  FreeBlock* lists[kClasses];
  char* next;
  char* end;
  bool exited;  ///< the thread is exiting: its blocks go to the orphans
};

/// What exited threads left (free blocks, chunk ends), for the next thread that needs space.
struct Orphans {
  std::mutex mutex;
  FreeBlock* lists[kClasses] = {};
  std::vector<std::pair<char*, char*>> spans;
};

/// Never destroyed: blocks may be freed during static destruction. fork() takes its mutex
/// first, so that a child never inherits it held by a thread that does not exist there.
Orphans& orphans() {
  static Orphans* o = [] {
    auto* made = new Orphans;
    const auto lock = [] { orphans().mutex.lock(); };
    const auto unlock = [] { orphans().mutex.unlock(); };
    pthread_atfork(lock, unlock, unlock);
    return made;
  }();
  return *o;
}

void push(FreeBlock*& list, void* block) {
  auto* b = static_cast<FreeBlock*>(block);
  b->next = list;
  list = b;
}

/// The free space [next, end) as one block (a multiple of 16 bytes, at most 512).
void keepRest(FreeBlock** lists, char* next, char* end) {
  if (end - next >= static_cast<std::ptrdiff_t>(kGrain))
    push(lists[sizeClass(static_cast<size_t>(end - next))], next);
}

thread_local ThreadPool t_pool{};

/// Hands the thread's pool to the orphans when the thread exits.
struct PoolExit {
  bool armed = false;
  ~PoolExit() {
    ThreadPool& pool = t_pool;
    Orphans& o = orphans();
    std::lock_guard<std::mutex> lock(o.mutex);
    for (size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = pool.lists[c]) {
        pool.lists[c] = b->next;
        push(o.lists[c], b);
      }
    }
    if (pool.end - pool.next >= static_cast<std::ptrdiff_t>(kPooledMaxBytes))
      o.spans.emplace_back(pool.next, pool.end);
    else
      keepRest(o.lists, pool.next, pool.end);
    pool = ThreadPool{};
    pool.exited = true;
  }
};
thread_local PoolExit t_exit;

/// The slow path: class c's list is empty.
[[gnu::noinline]] void* refill(ThreadPool& pool, size_t c) {
  const size_t size = (c + 1) * kGrain;
  if (pool.exited) return ::operator new(size);  // class-sized: it may join a free list later
  if (pool.end - pool.next < static_cast<std::ptrdiff_t>(size)) {
    Orphans& o = orphans();
    std::lock_guard<std::mutex> lock(o.mutex);
    t_exit.armed = true;  // registers the hand-over at the thread's exit
    if (FreeBlock* adopted = std::exchange(o.lists[c], nullptr)) {
      pool.lists[c] = adopted->next;
      return adopted;
    }
    keepRest(pool.lists, pool.next, pool.end);
    if (o.spans.empty()) {
      char* chunk = static_cast<char*>(allocateLarge(kHugePageBytes));
      o.spans.emplace_back(chunk, chunk + kHugePageBytes);
    }
    std::tie(pool.next, pool.end) = o.spans.back();
    o.spans.pop_back();
  }
  char* block = pool.next;
  pool.next += size;
  return block;
}

}  // namespace

void* allocatePooled(size_t bytes) {
  if (!kPoolOn || bytes > kPooledMaxBytes) return ::operator new(bytes);
  ThreadPool& pool = t_pool;
  const size_t c = sizeClass(bytes);
  if (FreeBlock* b = pool.lists[c]) {
    pool.lists[c] = b->next;
    return b;
  }
  return refill(pool, c);
}

void freePooled(void* p, size_t bytes) noexcept {
  if (!kPoolOn || bytes > kPooledMaxBytes) {
    ::operator delete(p);
    return;
  }
  ThreadPool& pool = t_pool;
  if (pool.exited) {
    Orphans& o = orphans();
    std::lock_guard<std::mutex> lock(o.mutex);
    push(o.lists[sizeClass(bytes)], p);
    return;
  }
  push(pool.lists[sizeClass(bytes)], p);
}

}  // namespace neuronsim::isa
