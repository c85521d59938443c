// InlineVector: in place up to N, spilled to the heap beyond, copies independent.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/builder/inline_vector.h"

using neuronsim::kernels::InlineVector;

namespace {

std::vector<int> contents(const InlineVector<int, 2>& v) {
  return std::vector<int>(v.begin(), v.end());
}

}  // namespace

TEST_CASE("InlineVector keeps order and values across the spill to the heap") {
  InlineVector<int, 2> v;
  CHECK(v.empty());
  std::vector<int> expected;
  for (int i = 0; i < 7; ++i) {
    v.push_back(10 * i + 1);
    expected.push_back(10 * i + 1);
    CHECK(v.size() == expected.size());
    CHECK(contents(v) == expected);
    CHECK(v[v.size() - 1] == 10 * i + 1);
  }
  v[0] = -5;
  CHECK(v[0] == -5);
}

TEST_CASE("InlineVector copies do not share storage, inline or spilled") {
  for (int n : {1, 2, 3, 5}) {
    InlineVector<int, 2> a;
    for (int i = 0; i < n; ++i) a.push_back(i);
    InlineVector<int, 2> b = a;
    b[0] = 99;
    b.push_back(7);
    CHECK(a[0] == 0);
    CHECK(a.size() == static_cast<size_t>(n));
    CHECK(b.size() == static_cast<size_t>(n + 1));
    CHECK(b[b.size() - 1] == 7);
    InlineVector<int, 2> c;
    c = b;
    CHECK(contents(c) == contents(b));
  }
}
