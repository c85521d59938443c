// The sliding ring: shared indices keep their positions, new ones take the next in turn.
#include "kernels/builder/ring.h"

namespace neuronsim::kernels {

void SlidingRing::place(int64_t key, int64_t series, int64_t first, int64_t span,
                        const Filler& fill) {
  std::vector<int64_t> positions;
  int64_t fresh = 0;
  if (last_ == std::pair{series, first - 1} && !lastPositions_.empty()) {
    positions.assign(lastPositions_.begin() + 1, lastPositions_.end());
    fresh = span - 1;
  }
  for (int64_t i = fresh; i < span; ++i) {
    const int64_t position = next_++ % size_;
    positions.push_back(position);
    if (fill({first + i, position, !filled_.contains(position)})) filled_.insert(position);
  }
  last_ = std::pair{series, first};
  lastPositions_ = positions;
  placed_[key] = std::move(positions);
}

std::vector<int64_t> SlidingRing::take(int64_t key) {
  std::vector<int64_t> positions = std::move(placed_.at(key));
  placed_.erase(key);
  return positions;
}

}  // namespace neuronsim::kernels
