// Byte patterns of on-chip accesses: canonical form and the exact overlap test, against brute
// force on random patterns and on the interleavings kernels use (phases, even/odd, dtype views).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "isa/dtype.h"
#include "kernels/builder/byte_pattern.h"

using neuronsim::isa::AccessPattern;
using neuronsim::isa::Dim;
using neuronsim::isa::Dtype;
using neuronsim::kernels::BytePattern;
using neuronsim::kernels::bytePatternOf;
using neuronsim::kernels::kMaxExactRuns;
using neuronsim::kernels::patternsMeet;

namespace {

AccessPattern onChip(Dtype dtype, int64_t offsetBytes, std::vector<Dim> dims) {
  AccessPattern ap;
  ap.dtype = dtype;
  ap.partitionCount = 128;
  ap.offset = offsetBytes;
  ap.dims = std::move(dims);
  return ap;
}

/// Every byte the pattern touches, by walking it element by element.
std::set<int64_t> bytesOf(const AccessPattern& ap) {
  std::set<int64_t> out;
  const int64_t eb = neuronsim::isa::dtypeBytes(ap.dtype);
  std::vector<int64_t> idx(ap.dims.size(), 0);
  for (const Dim& d : ap.dims)
    if (d.num <= 0) return out;
  while (true) {
    int64_t e = 0;
    for (size_t j = 0; j < idx.size(); ++j) e += idx[j] * ap.dims[j].step;
    for (int64_t b = 0; b < eb; ++b) out.insert(ap.offset + e * eb + b);
    int j = static_cast<int>(idx.size()) - 1;
    while (j >= 0 && ++idx[j] == ap.dims[j].num) idx[j--] = 0;
    if (j < 0) break;
  }
  return out;
}

bool bruteMeet(const AccessPattern& a, const AccessPattern& b, int64_t lo, int64_t hi) {
  const std::set<int64_t> x = bytesOf(a), y = bytesOf(b);
  return std::any_of(x.begin(), x.end(),
                     [&](int64_t v) { return v >= lo && v < hi && y.count(v) != 0; });
}

bool meet(const AccessPattern& a, const AccessPattern& b, int64_t lo = 0,
          int64_t hi = int64_t{1} << 40) {
  const auto pa = bytePatternOf(a), pb = bytePatternOf(b);
  // A dense pattern (null) stands for its byte bounding range.
  const std::set<int64_t> x = bytesOf(a), y = bytesOf(b);
  if (!pa) lo = std::max(lo, *x.begin()), hi = std::min(hi, *x.rbegin() + 1);
  if (!pb) lo = std::max(lo, *y.begin()), hi = std::min(hi, *y.rbegin() + 1);
  return patternsMeet(pa.get(), pb.get(), lo, hi);
}

}  // namespace

TEST_CASE("byte pattern: dense accesses have none, strided ones are canonical") {
  CHECK(bytePatternOf(onChip(Dtype::Fp32, 0, {{64, 4}, {1, 64}})) == nullptr);
  CHECK(bytePatternOf(onChip(Dtype::Fp32, 256, {{-1, 64}})) == nullptr);       // reversed row
  CHECK(bytePatternOf(onChip(Dtype::Bf16, 0, {{0, 7}, {1, 16}})) == nullptr);  // broadcast
  CHECK(bytePatternOf(onChip(Dtype::Fp32, 0, {{1, 3}, {1, 8}})) == nullptr);   // windows overlap
  const auto even = bytePatternOf(onChip(Dtype::Fp32, 16, {{2, 8}}));
  REQUIRE(even != nullptr);
  CHECK(*even == BytePattern{16, 4, {{8, 8}}});
  CHECK(even->end() == 16 + 7 * 8 + 4);
  // Reversed strided rows fold into the same pattern; column blocks keep their run.
  const auto reversed = bytePatternOf(onChip(Dtype::Fp32, 16 + 7 * 8, {{-2, 8}}));
  REQUIRE(reversed != nullptr);
  CHECK(*reversed == *even);
  const auto block = bytePatternOf(onChip(Dtype::Bf16, 0, {{64, 4}, {1, 16}}));
  REQUIRE(block != nullptr);
  CHECK(*block == BytePattern{0, 32, {{128, 4}}});
}

TEST_CASE("byte pattern: interleaved strided accesses do not meet, overlapping ones do") {
  const auto evenF = onChip(Dtype::Fp32, 0, {{2, 64}});
  const auto oddF = onChip(Dtype::Fp32, 4, {{2, 64}});
  CHECK_FALSE(meet(evenF, oddF));
  CHECK(meet(evenF, evenF));
  CHECK(meet(oddF, onChip(Dtype::Fp32, 4 + 8 * 63, {{1, 1}})));  // the last odd element
  // bf16 views of the same bytes: the high half of fp32 element 2 meets the even elements,
  // bf16 elements inside odd fp32 elements do not.
  CHECK(meet(evenF, onChip(Dtype::Bf16, 10, {{4, 16}})));
  CHECK_FALSE(meet(evenF, onChip(Dtype::Bf16, 4, {{4, 16}})));
  CHECK_FALSE(meet(evenF, onChip(Dtype::Bf16, 6, {{4, 16}})));
  // Column blocks of a strided [4, 16] view: two blocks side by side, then straddling.
  const auto left = onChip(Dtype::Fp32, 0, {{32, 4}, {1, 8}});
  const auto right = onChip(Dtype::Fp32, 32, {{32, 4}, {1, 8}});
  CHECK_FALSE(meet(left, right));
  CHECK(meet(left, onChip(Dtype::Fp32, 28, {{32, 4}, {1, 2}})));
  // Broadcast (zero-step) dims read one element many times.
  CHECK(meet(onChip(Dtype::Fp32, 8, {{0, 16}, {2, 2}}), onChip(Dtype::Fp32, 16, {{2, 4}})));
  CHECK_FALSE(meet(onChip(Dtype::Fp32, 8, {{0, 16}, {4, 2}}), onChip(Dtype::Fp32, 4, {{2, 8}})));
}

TEST_CASE("byte pattern: partial overlaps at the pattern ends and windows") {
  const auto a = onChip(Dtype::Fp32, 0, {{3, 5}});                 // elements 0 3 6 9 12
  CHECK(meet(a, onChip(Dtype::Fp32, 40, {{2, 2}})));               // elements 10 12: the last one
  CHECK_FALSE(meet(a, onChip(Dtype::Fp32, 4, {{3, 4}, {1, 2}})));  // 1 2 4 5 7 8 10 11
  // bf16 halves after element 9: only the upper half of element 12 (bytes 50, 51) is shared.
  CHECK(meet(a, onChip(Dtype::Bf16, 42, {{2, 3}})));
  CHECK_FALSE(meet(a, onChip(Dtype::Bf16, 40, {{2, 2}})));
  const auto b = onChip(Dtype::Fp32, 0, {{5, 4}});  // 0 5 10 15
  CHECK(meet(a, b, 0, 4));
  CHECK_FALSE(meet(a, b, 4, 60));  // they share element 0 only
  CHECK_FALSE(meet(onChip(Dtype::Fp32, 0, {{2, 8}}), onChip(Dtype::Fp32, 64, {{2, 8}})));
}

TEST_CASE("byte pattern: the eight phases of a stride-2 3-D tile are pairwise disjoint") {
  // out[d][h][w] of an [8, 8, 8] fp32 tile; phase (a, b, c) writes out[a::2][b::2][c::2].
  std::vector<AccessPattern> phases;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        phases.push_back(
            onChip(Dtype::Fp32, 4 * (a * 64 + b * 8 + c), {{128, 4}, {16, 4}, {2, 4}}));
  for (size_t i = 0; i < phases.size(); ++i)
    for (size_t j = 0; j < phases.size(); ++j) {
      INFO(i << " vs " << j);
      CHECK(meet(phases[i], phases[j]) == (i == j));
    }
}

TEST_CASE("byte pattern: too many runs to decide answers 'meet' (never misses a dependency)") {
  // Even and odd rows of a [256, 128] fp32 tile, even columns: the residues agree, the runs
  // outnumber kMaxExactRuns, so the answer is the safe one; a small window decides exactly.
  const auto evenRows = onChip(Dtype::Fp32, 0, {{256, 128}, {2, 64}});
  const auto oddRows = onChip(Dtype::Fp32, 512, {{256, 128}, {2, 64}});
  REQUIRE(128 * 64 > kMaxExactRuns);
  CHECK(meet(evenRows, oddRows));
  CHECK_FALSE(meet(evenRows, oddRows, 0, 4 * 1024));
  CHECK_FALSE(bruteMeet(evenRows, oddRows, 0, int64_t{1} << 40));
}

TEST_CASE("byte pattern: random patterns and windows agree with brute force") {
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  const Dtype dtypes[] = {Dtype::Fp32, Dtype::Bf16, Dtype::Fp8E4m3};
  auto random = [&] {
    const Dtype dt = dtypes[pick(0, 2)];
    std::vector<Dim> dims;
    const int rank = pick(1, 3);
    for (int d = 0; d < rank; ++d) dims.push_back(Dim{pick(-3, 9), pick(1, 5)});
    int64_t lowest = 0;
    for (const Dim& d : dims) lowest += std::min<int64_t>(0, d.step * (d.num - 1));
    return onChip(dt, (pick(0, 24) - lowest) * neuronsim::isa::dtypeBytes(dt), dims);
  };
  int met = 0, missed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const AccessPattern a = random(), b = random();
    const std::set<int64_t> x = bytesOf(a), y = bytesOf(b);
    int64_t lo = std::min(*x.begin(), *y.begin()), hi = std::max(*x.rbegin(), *y.rbegin()) + 1;
    if (pick(0, 1)) {
      const int64_t cut0 = lo + pick(0, static_cast<int>(hi - lo)),
                    cut1 = lo + pick(0, static_cast<int>(hi - lo));
      lo = std::min(cut0, cut1);
      hi = std::max(cut0, cut1) + 1;
    }
    const bool truth = bruteMeet(a, b, lo, hi);
    INFO("trial " << trial);
    // A dense side (null pattern) stands for its whole bounding range, so brute force on its
    // bytes equals the truth.
    CHECK(meet(a, b, lo, hi) == truth);
    (truth ? met : missed)++;
  }
  CHECK(met > 300);
  CHECK(missed > 300);
}
