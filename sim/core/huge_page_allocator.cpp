// Huge-page backed allocation of large blocks.
#include "sim/core/huge_page_allocator.h"

#include <sys/mman.h>

namespace neuronsim::sim {

void* allocateLarge(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes < kHugePage) {
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
    throw std::bad_alloc();
  }
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < bytes) throw std::bad_alloc();
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
  return p;
}

}  // namespace neuronsim::sim
