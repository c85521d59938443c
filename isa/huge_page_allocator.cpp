// Huge-page backed allocation of large blocks.
#include "isa/huge_page_allocator.h"

#include <sys/mman.h>

namespace neuronsim::isa {

void* allocateLarge(size_t bytes) {
  if (bytes < kHugePageBytes) {
    if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
    throw std::bad_alloc();
  }
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (rounded < bytes) throw std::bad_alloc();
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (!p) throw std::bad_alloc();
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
  return p;
}

}  // namespace neuronsim::isa
