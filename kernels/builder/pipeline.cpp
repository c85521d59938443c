// Buffer-set rotation and DMA queue round robins.

#include "kernels/builder/pipeline.h"

#include <algorithm>

namespace neuronsim::kernels {

QueueCycle QueueCycle::span(int32_t first, int32_t count) {
  std::vector<int32_t> queues;
  for (int32_t q = 0; q < std::max(1, count); ++q) queues.push_back(first + q);
  return QueueCycle(std::move(queues));
}

void runPipelined(int64_t count, int sets, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& compute) {
  const int64_t ahead = std::max(1, sets) - 1;
  const auto setOf = [sets](int64_t item) { return static_cast<int>(item % std::max(1, sets)); };
  for (int64_t item = 0; item < std::min(ahead, count); ++item) load(item, setOf(item));
  for (int64_t item = 0; item < count; ++item) {
    if (ahead == 0) load(item, setOf(item));
    if (ahead > 0 && item + ahead < count) load(item + ahead, setOf(item + ahead));
    compute(item, setOf(item));
  }
}

}  // namespace neuronsim::kernels
