// "did you mean": optimal string alignment distance against each candidate.
#include "isa/spelling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

namespace neuronsim::isa {

namespace {

/// Edits (insert, delete, replace, swap of neighbours) turning `a` into `b`.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  constexpr size_t kMaxEdits = 2;
  const std::string* best = nullptr;
  size_t bestEdits = kMaxEdits + 1;
  bool tie = false;
  for (const std::string& candidate : candidates) {
    const size_t edits = editDistance(word, candidate);
    if (edits < bestEdits) {
      best = &candidate;
      bestEdits = edits;
      tie = false;
    } else if (edits == bestEdits && best && *best != candidate) {
      tie = true;
    }
  }
  if (!best || tie || bestEdits == 0 || 2 * bestEdits >= word.size()) return "";
  return fmt::format(" (did you mean {}?)", *best);
}

}  // namespace neuronsim::isa
