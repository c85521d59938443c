#pragma once
// The exact bytes an on-chip access touches inside a partition, and whether two such sets meet.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "isa/access_pattern.h"

namespace neuronsim::kernels {

/// The bytes of one partition an SBUF/PSUM access pattern touches: runs of `run` bytes starting
/// at base + sum(i_j * dims[j].step), 0 <= i_j < dims[j].num. Canonical: byte steps > 0,
/// nums > 1, steps descending, no dim that only extends the run (step <= run), broadcast
/// (zero-step) dims dropped, negative steps folded into the base. The constructor caches end()
/// and stepGcd(): the fields are not to be changed afterwards.
struct BytePattern {
  BytePattern(int64_t base, int64_t run, std::vector<isa::Dim> dims);

  int64_t base;
  int64_t run;
  std::vector<isa::Dim> dims;

  int64_t begin() const { return base; }
  /// One past the last byte.
  int64_t end() const { return end_; }
  /// The gcd of the dims' steps (0 without dims).
  int64_t stepGcd() const { return stepGcd_; }
  bool operator==(const BytePattern& o) const {
    return base == o.base && run == o.run && dims == o.dims;
  }

 private:
  int64_t end_;
  int64_t stepGcd_;
};

/// Hash of a pattern's base, run and dims (to intern equal patterns).
struct BytePatternHash {
  size_t operator()(const BytePattern& p) const;
};

/// The pattern of an on-chip access, or null when it fills its byte bounding range (dense).
std::shared_ptr<const BytePattern> bytePatternOf(const isa::AccessPattern& ap);

/// Sorts byte or element runs [first, second) and merges those that overlap or touch.
void mergeRuns(std::vector<std::pair<int64_t, int64_t>>& runs);

/// Most runs enumerated per side before `patternsMeet` gives up and answers true.
inline constexpr int64_t kMaxExactRuns = 4096;

/// True when `a` and `b` share a byte in [lo, hi); null stands for every byte of [lo, hi).
/// Exact (bounding test, then a gcd/residue test, then runs enumerated inside the window);
/// answers true when either side has more than kMaxExactRuns runs in the window.
bool patternsMeet(const BytePattern* a, const BytePattern* b, int64_t lo, int64_t hi);

}  // namespace neuronsim::kernels
