#pragma once
// A window of consecutive indices (input planes, rows) sliding over a ring of buffer positions:
// each step keeps the positions of the indices it shares with the previous window and loads the
// rest into the ring's next positions.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace neuronsim::kernels {

/// Ring positions 0..size-1 holding windows of consecutive indices that slide forward.
class SlidingRing {
 public:
  /// What a fill gets: the index entering the window, its ring position, and whether no earlier
  /// fill wrote that position (so it holds no borders or zeros yet).
  struct Fill {
    int64_t index;
    int64_t position;
    bool firstFill;
  };
  /// Writes `fill.index` into `fill.position`; returns false when it wrote nothing (an index
  /// nobody reads, e.g. in the padding), so the position still counts as never filled.
  using Filler = std::function<bool(const Fill&)>;

  /// `size` positions: at least the span times the windows placed ahead of their use.
  explicit SlidingRing(int64_t size) : size_(size) {}

  /// Places the window [first, first + span) of `series` (a batch, a pass) for `key`. When the
  /// previous window was the same series starting before `first`, the indices it shares keep
  /// their positions and only the others are filled; otherwise every index is. Each filled index
  /// takes the next position in turn.
  void place(int64_t key, int64_t series, int64_t first, int64_t span, const Filler& fill);

  /// The positions of `key`'s window in index order; forgets them.
  std::vector<int64_t> take(int64_t key);

 private:
  int64_t size_;
  int64_t next_ = 0;
  std::optional<std::pair<int64_t, int64_t>> last_;  // series and first index of the last window
  std::vector<int64_t> lastPositions_;
  std::map<int64_t, std::vector<int64_t>> placed_;
  std::set<int64_t> filled_;  // positions a fill has written
};

}  // namespace neuronsim::kernels
