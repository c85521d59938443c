// The sliding ring: shared indices keep their positions, new ones take the next in turn.
#include "kernels/builder/ring.h"

#include <algorithm>

namespace neuronsim::kernels {

void SlidingRing::place(int64_t key, int64_t series, int64_t first, int64_t span,
                        const Filler& fill) {
  std::vector<int64_t> positions;
  const int64_t slide = last_ && last_->first == series ? first - last_->second : 0;
  const int64_t kept = static_cast<int64_t>(lastPositions_.size()) - slide;
  if (slide > 0 && kept > 0)
    positions.assign(lastPositions_.begin() + slide,
                     lastPositions_.begin() + slide + std::min(kept, span));
  for (int64_t i = static_cast<int64_t>(positions.size()); i < span; ++i) {
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
