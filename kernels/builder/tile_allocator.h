#pragma once
// First-fit allocation of per-partition byte ranges in SBUF or PSUM, bank-aware for PSUM.

#include <cstdint>
#include <map>
#include <string>

namespace neuronsim::kernels {

/// Offsets KernelBuilder's PSUM allocator hands out are multiples of this (bytes per partition).
inline constexpr int64_t kPsumAlignment = 64;

/// Hands out byte ranges [offset, offset+bytes) that every partition shares.
class TileAllocator {
 public:
  /// `capacity` bytes per partition; `bankBytes` > 0 keeps an allocation of at most one bank
  /// inside one bank and starts a larger one at a bank boundary; offsets are multiples of
  /// `alignment` bytes.
  TileAllocator(int64_t capacity, int64_t bankBytes, int64_t alignment);

  /// Offset of a new allocation, or -1 when nothing fits.
  int64_t allocate(int64_t bytes);
  /// Frees the allocation starting at `offset`; false when there is none.
  bool release(int64_t offset);
  int64_t capacity() const { return capacity_; }
  int64_t inUse() const { return inUse_; }
  /// Size of the allocation starting at `offset`, or 0.
  int64_t sizeAt(int64_t offset) const;
  /// True when bytes [lo, hi) lie inside one live allocation.
  bool covers(int64_t lo, int64_t hi) const { return ownerOf(lo, hi) >= 0; }
  /// Offset of the live allocation that holds bytes [lo, hi), or -1.
  int64_t ownerOf(int64_t lo, int64_t hi) const;

 private:
  bool fits(int64_t start, int64_t bytes) const;
  int64_t capacity_, bankBytes_, alignment_;
  int64_t inUse_ = 0;
  std::map<int64_t, int64_t> live_;  ///< offset -> bytes (reserved, rounded up)
};

}  // namespace neuronsim::kernels
