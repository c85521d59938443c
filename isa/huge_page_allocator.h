#pragma once
// An allocator for the large arrays a program and a run fill once (the program's instructions,
// engine streams, semaphore histories): blocks of 2 MiB and more sit on 2 MiB boundaries and
// are marked for transparent huge pages, so touching them costs one page fault per 2 MiB
// instead of one per 4 KiB (a fault costs microseconds, far more under virtualization), and
// reading them misses the TLB 512 times less often.

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace neuronsim::isa {

/// 2 MiB, the x86-64 transparent huge page.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// `bytes` of storage (released with std::free); huge-page backed from 2 MiB up where the
/// kernel offers it.
void* allocateLarge(size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

/// A std::vector whose large buffers use huge pages.
template <typename T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace neuronsim::isa
