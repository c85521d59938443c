#pragma once
// An allocator for the large arrays a run fills once (engine streams, semaphore histories):
// blocks of 2 MiB and more sit on 2 MiB boundaries and are marked for transparent huge pages,
// so touching them costs one page fault per 2 MiB instead of one per 4 KiB (a fault costs
// microseconds, far more under virtualization).

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace neuronsim::sim {

/// `bytes` of storage (released with std::free); huge-page backed from 2 MiB up where the
/// kernel offers it.
void* allocateLarge(size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocateLarge(n * sizeof(T))); }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

/// A std::vector whose large buffers use huge pages.
template <typename T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace neuronsim::sim
