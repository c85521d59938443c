#pragma once
// The spatial layout: D cut into slabs that become extra planes, so few (batch, channel) planes
// still fill the partitions.

#include <cstdint>
#include <optional>

#include "kernels/builder/views.h"
#include "kernels/pooling/pooling_config.h"
#include "kernels/pooling/pooling_schedule.h"

namespace neuronsim::kernels {

/// D cut into `slabs` slabs of `length` inputs (length / sD outputs) each.
struct SlabSplit {
  int64_t slabs = 1;
  int64_t length = 1;
};

/// The slab split `schedule` asks for (spatial), or auto picks when B*C fills under half of
/// `partitions`: the most slabs (up to filling the partitions) that divide D into whole
/// windows. Only when windows do not overlap along D (kD <= sD, pD = 0) and both layouts
/// are the same, so every slab is an independent pooling problem. Throws neuronsim::Error
/// naming `kernel` when spatial is asked for but impossible.
std::optional<SlabSplit> chooseSlabs(std::string_view kernel, const PoolingConfig& config,
                                     const PoolSchedule& schedule, int32_t partitions);

/// The problem each slab is: B*slabs batches (NDHWC) or C*slabs channels (NCDHW), D = length.
PoolingConfig slabConfig(const PoolingConfig& config, const SlabSplit& split);

/// `view` (a 5-D tensor in `layout`) with its D axis cut into the split's slabs, seen as the
/// slab problem's tensor.
HbmView slabView(const HbmView& view, PoolLayout layout, const SlabSplit& split);

}  // namespace neuronsim::kernels
