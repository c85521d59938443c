// Choosing D slabs for the spatial layout and reshaping HBM views into slab planes.

#include "kernels/pooling/pooling_slabs.h"

#include <fmt/format.h>

#include <string>

#include "isa/error.h"

namespace neuronsim::kernels {

std::optional<SlabSplit> chooseSlabs(std::string_view kernel, const PoolingConfig& config,
                                     const PoolSchedule& schedule, int32_t partitions) {
  if (schedule.partitioning == PoolPartitioning::Channels) return std::nullopt;
  const bool asked = schedule.partitioning == PoolPartitioning::Spatial;
  if (!asked && 2 * config.planes() > partitions) return std::nullopt;
  const int64_t d = config.input[0], k = config.kernel[0], s = config.stride[0];
  const bool possible =
      config.dataFormat == config.outputFormat && k <= s && config.padding[0] == 0 && d % s == 0;
  int64_t best = 1;
  const int64_t target = std::max<int64_t>(2, partitions / config.planes());
  for (int64_t slabs = 2; possible && slabs <= std::min(target, d / s); ++slabs) {
    if (d % slabs == 0 && (d / slabs) % s == 0) best = slabs;
  }
  if (best == 1) {
    if (!asked) return std::nullopt;
    throw Error(
        fmt::format("{}: layout spatial needs windows that do not overlap along D (kernel_size <= "
                    "stride, padding 0), D cut into at least 2 slabs of whole windows, and "
                    "data_format equal to output_format",
                    kernel));
  }
  return SlabSplit{best, d / best};
}

PoolingConfig slabConfig(const PoolingConfig& config, const SlabSplit& split) {
  PoolingConfig slab = config;
  slab.input[0] = split.length;
  if (config.dataFormat == PoolLayout::Ncdhw) {
    slab.channels *= split.slabs;
  } else {
    slab.batch *= split.slabs;
  }
  return slab;
}

HbmView slabView(const HbmView& view, PoolLayout layout, const SlabSplit& split) {
  const int d = layout == PoolLayout::Ncdhw ? 2 : 1;
  const HbmView cut = view.split(d, {split.slabs, view.size(d) / split.slabs});
  return layout == PoolLayout::Ncdhw ? cut.merge(1, 2) : cut.merge(0, 1);
}

}  // namespace neuronsim::kernels
