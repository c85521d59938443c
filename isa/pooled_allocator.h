#pragma once
// The small heap blocks of a program (an operand's dims, an instruction's sources, waits and
// signals, boxed optional operands) come from per-thread free lists carved out of 2 MiB
// huge-page chunks instead of malloc's 4 KiB pages: building a million-instruction program
// faults once per 2 MiB instead of once per 4 KiB, and the decoder, which reads five streams
// interleaved, misses the TLB far less often. A std::vector of an ISA element type uses the
// pool through a std::allocator specialization (NEURONSIM_POOLED_STD_ALLOCATOR), so its type
// stays std::vector<T>. Under AddressSanitizer the pool hands every block to operator new, so
// that the sanitizer still sees each one.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace neuronsim::isa {

/// False under AddressSanitizer: every block then comes from operator new.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPoolOn = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kPoolOn = false;
#else
inline constexpr bool kPoolOn = true;
#endif
#else
inline constexpr bool kPoolOn = true;
#endif

/// Blocks up to this size come from the pool, in size classes 16 bytes apart; larger ones
/// from operator new.
inline constexpr size_t kPooledMaxBytes = 512;

/// `bytes` of storage aligned to 16; release it with freePooled(p, bytes), on any thread.
/// The pool keeps its chunks for the process's later programs: it never returns them.
void* allocatePooled(size_t bytes);
void freePooled(void* p, size_t bytes) noexcept;

/// A stateless allocator on the pool.
template <typename T>
struct PooledAllocator {
  static_assert(alignof(T) <= 16, "the pool aligns blocks to 16 bytes");
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_move_assignment = std::true_type;
  using is_always_equal = std::true_type;

  PooledAllocator() noexcept = default;
  template <typename U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocatePooled(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { freePooled(p, n * sizeof(T)); }
};

/// Destroys and frees a T made by makePooled.
template <typename T>
struct PooledDelete {
  void operator()(T* p) const noexcept {
    p->~T();
    freePooled(p, sizeof(T));
  }
};

template <typename T>
using PooledPtr = std::unique_ptr<T, PooledDelete<T>>;

/// A T constructed from `args` in a pool block.
template <typename T, typename... Args>
PooledPtr<T> makePooled(Args&&... args) {
  static_assert(alignof(T) <= 16, "the pool aligns blocks to 16 bytes");
  void* block = allocatePooled(sizeof(T));
  try {
    return PooledPtr<T>(new (block) T(std::forward<Args>(args)...));
  } catch (...) {
    freePooled(block, sizeof(T));
    throw;
  }
}

}  // namespace neuronsim::isa

/// Makes std::allocator<T> (so std::vector<T>) allocate from the pool. Use it at global scope
/// right after T's definition, before anything names std::vector<T>: every translation unit
/// that can name T then sees the specialization.
#define NEURONSIM_POOLED_STD_ALLOCATOR(T)                                       \
  template <>                                                                   \
  struct std::allocator<T> : neuronsim::isa::PooledAllocator<T> {               \
    allocator() noexcept = default;                                             \
    allocator(const allocator&) noexcept = default;                             \
    template <typename U>                                                       \
    allocator(const allocator<U>&) noexcept {}                                  \
    friend bool operator==(const allocator&, const allocator&) { return true; } \
  }
