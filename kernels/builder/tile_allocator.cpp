// First-fit tile allocation over the live allocations, bank rules for PSUM.
#include "kernels/builder/tile_allocator.h"

#include <algorithm>
#include <iterator>

#include "isa/size_limits.h"

namespace neuronsim::kernels {

namespace {
int64_t roundUp(int64_t v, int64_t to) {
  return isa::ceilDiv(v, to) * to;
}
}  // namespace

TileAllocator::TileAllocator(int64_t capacity, int64_t bankBytes, int64_t alignment)
    : capacity_(capacity), bankBytes_(bankBytes), alignment_(alignment) {}

bool TileAllocator::fits(int64_t start, int64_t bytes) const {
  if (start + bytes > capacity_) return false;
  auto next = live_.lower_bound(start);
  if (next != live_.end() && next->first < start + bytes) return false;
  if (next != live_.begin() && std::prev(next)->first + std::prev(next)->second > start)
    return false;
  return true;
}

int64_t TileAllocator::allocate(int64_t bytes) {
  const int64_t size = roundUp(std::max<int64_t>(bytes, 1), alignment_);
  // Candidate starts: 0 and the end of every live allocation (plus bank starts for PSUM).
  auto candidate = [&](int64_t start) -> int64_t {
    start = roundUp(start, alignment_);
    if (bankBytes_ > 0) {
      if (size > bankBytes_) {
        start = roundUp(start, bankBytes_);
      } else if (start / bankBytes_ != (start + size - 1) / bankBytes_) {
        start = roundUp(start, bankBytes_);
      }
    }
    return fits(start, size) ? start : -1;
  };
  int64_t found = candidate(0);
  for (auto it = live_.begin(); found < 0 && it != live_.end(); ++it)
    found = candidate(it->first + it->second);
  if (found < 0) return -1;
  live_.emplace(found, size);
  inUse_ += size;
  return found;
}

bool TileAllocator::release(int64_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) return false;
  inUse_ -= it->second;
  live_.erase(it);
  return true;
}

int64_t TileAllocator::sizeAt(int64_t offset) const {
  auto it = live_.find(offset);
  return it == live_.end() ? 0 : it->second;
}

int64_t TileAllocator::ownerOf(int64_t lo, int64_t hi) const {
  auto it = live_.upper_bound(lo);
  if (it == live_.begin()) return -1;
  --it;
  return it->first <= lo && hi <= it->first + it->second ? it->first : -1;
}

}  // namespace neuronsim::kernels
