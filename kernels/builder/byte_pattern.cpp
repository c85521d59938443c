// Canonical byte patterns of on-chip accesses and an exact, bounded test of whether two meet.
#include "kernels/builder/byte_pattern.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "isa/dtype.h"

namespace neuronsim::kernels {

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

int64_t floorMod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// Visits the runs of a pattern that meet [lo, hi), clipped to it, in visiting order, until the
/// visitor returns false or after kMaxExactRuns steps (then `exhausted`).
class RunWalker {
 public:
  RunWalker(const BytePattern& p, int64_t lo, int64_t hi) : p_(p), lo_(lo), hi_(hi) {}
  template <class F>
  void walk(F&& visit) {
    walk(0, p_.base, p_.end() - p_.base, visit);
  }
  bool exhausted() const { return budget_ < 0; }

 private:
  /// `reach`: bytes dims j.. and the run span from `base`.
  template <class F>
  bool walk(size_t j, int64_t base, int64_t reach, F& visit) {
    if (--budget_ < 0) return false;
    if (j == p_.dims.size()) {
      return visit(std::max(base, lo_), std::min(base + p_.run, hi_));
    }
    const int64_t step = p_.dims[j].step;
    const int64_t inner = reach - step * (p_.dims[j].num - 1);
    const int64_t first = std::max<int64_t>(0, floorDiv(lo_ - base - inner, step) + 1);
    const int64_t last = std::min(p_.dims[j].num - 1, floorDiv(hi_ - 1 - base, step));
    for (int64_t i = first; i <= last; ++i)
      if (!walk(j + 1, base + i * step, inner, visit)) return false;
    return true;
  }

  const BytePattern& p_;
  int64_t lo_, hi_;
  int64_t budget_ = kMaxExactRuns;
};

bool hasByteIn(const BytePattern& p, int64_t lo, int64_t hi) {
  RunWalker walker(p, lo, hi);
  bool found = false;
  walker.walk([&](int64_t, int64_t) {
    found = true;
    return false;
  });
  return found || walker.exhausted();
}

/// False when the residues of both patterns modulo the gcd of all their steps are disjoint:
/// interleaved accesses of one stride (even and odd elements, phases) never meet.
bool residuesMayMeet(const BytePattern& a, const BytePattern& b) {
  const int64_t m = std::gcd(a.stepGcd(), b.stepGcd());
  if (a.run >= m || b.run >= m) return true;
  const int64_t ra = floorMod(a.base, m);
  const int64_t rb = floorMod(b.base, m);
  return floorMod(rb - ra, m) < a.run || floorMod(ra - rb, m) < b.run;
}

int64_t runCount(const BytePattern& p) {
  int64_t n = 1;
  for (const isa::Dim& d : p.dims) n = std::min(n * d.num, kMaxExactRuns + 1);
  return n;
}

}  // namespace

void mergeRuns(std::vector<std::pair<int64_t, int64_t>>& runs) {
  if (!std::is_sorted(runs.begin(), runs.end())) std::sort(runs.begin(), runs.end());
  size_t w = 0;
  for (size_t r = 1; r < runs.size(); ++r) {
    if (runs[r].first <= runs[w].second) {
      runs[w].second = std::max(runs[w].second, runs[r].second);
    } else {
      runs[++w] = runs[r];
    }
  }
  runs.resize(runs.empty() ? 0 : w + 1);
}

BytePattern::BytePattern(int64_t base, int64_t run, std::vector<isa::Dim> dims)
    : base(base), run(run), dims(std::move(dims)), end_(base + run), stepGcd_(0) {
  for (const isa::Dim& d : this->dims) {
    end_ += d.step * (d.num - 1);
    stepGcd_ = std::gcd(stepGcd_, d.step);
  }
}

size_t BytePatternHash::operator()(const BytePattern& p) const {
  size_t h = std::hash<int64_t>()(p.base) * 31 + std::hash<int64_t>()(p.run);
  for (const isa::Dim& d : p.dims) h = (h * 31 + std::hash<int64_t>()(d.step)) * 31 + d.num;
  return h;
}

std::shared_ptr<const BytePattern> bytePatternOf(const isa::AccessPattern& ap) {
  const int64_t bytes = isa::dtypeBytes(ap.dtype);
  int64_t base = ap.offset;
  int64_t run = bytes;
  std::vector<isa::Dim> dims;
  for (const isa::Dim& d : ap.dims) {
    if (d.num <= 0) return nullptr;
    if (d.num == 1 || d.step == 0) continue;
    int64_t step = 0;
    if (__builtin_mul_overflow(d.step, bytes, &step)) return nullptr;
    if (step < 0) {
      base += step * (d.num - 1);
      step = -step;
    }
    dims.push_back(isa::Dim{step, d.num});
  }
  std::sort(dims.begin(), dims.end(),
            [](const isa::Dim& x, const isa::Dim& y) { return x.step < y.step; });
  size_t folded = 0;
  for (; folded < dims.size() && dims[folded].step <= run; ++folded)
    run += dims[folded].step * (dims[folded].num - 1);
  if (folded == dims.size()) return nullptr;
  std::reverse(dims.begin(), dims.end());
  dims.resize(dims.size() - folded);
  return std::make_shared<const BytePattern>(base, run, std::move(dims));
}

bool patternsMeet(const BytePattern* a, const BytePattern* b, int64_t lo, int64_t hi) {
  for (const BytePattern* p : {a, b}) {
    if (p == nullptr) continue;
    lo = std::max(lo, p->begin());
    hi = std::min(hi, p->end());
  }
  if (lo >= hi) return false;
  if (a == nullptr && b == nullptr) return true;
  if (a == nullptr || b == nullptr) return hasByteIn(a ? *a : *b, lo, hi);
  if (!residuesMayMeet(*a, *b)) return false;
  if (runCount(*a) > runCount(*b)) std::swap(a, b);
  thread_local std::vector<std::pair<int64_t, int64_t>> runs;  // reused: no allocation per call
  runs.clear();
  RunWalker collect(*a, lo, hi);
  collect.walk([&](int64_t r0, int64_t r1) {
    runs.emplace_back(r0, r1);
    return true;
  });
  if (collect.exhausted()) return true;
  if (runs.empty()) return false;
  mergeRuns(runs);
  bool met = false;
  RunWalker probe(*b, lo, hi);
  auto it = runs.begin();  // the first merged run ending after the last probe run's start
  int64_t lastStart = INT64_MIN;
  probe.walk([&](int64_t r0, int64_t r1) {
    if (r0 < lastStart) it = runs.begin();
    lastStart = r0;
    while (it != runs.end() && it->second <= r0) ++it;
    met = it != runs.end() && it->first < r1;
    return !met;
  });
  return met || probe.exhausted();
}

}  // namespace neuronsim::kernels
