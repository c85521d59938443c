#pragma once
// The spatial layout: D (and then H) cut into slabs that become extra planes, so few
// (batch, channel) planes still fill the partitions.

#include <cstdint>
#include <optional>

#include "kernels/builder/views.h"
#include "kernels/pooling/pooling_config.h"
#include "kernels/pooling/pooling_schedule.h"

namespace neuronsim::kernels {

/// D cut into `slabsD` slabs of `lengthD` inputs and H into `slabsH` slabs of `lengthH`
/// inputs; every (D slab, H slab) pair is a plane of its own.
struct SlabSplit {
  int64_t slabsD = 1;
  int64_t lengthD = 1;
  int64_t slabsH = 1;
  int64_t lengthH = 1;
  /// Planes each (batch, channel) plane becomes.
  int64_t slabs() const { return slabsD * slabsH; }
};

/// The slab split `schedule` asks for (spatial), or auto picks when B*C fills under half of
/// `partitions` (NDHWC: and H*W >= 512): the most slabs (up to filling the partitions) that cut D
/// and H into whole windows, D slabs preferred (their planes are evenly spaced in HBM; NDHWC cuts D
/// only). An axis is cut only when windows do not overlap along it (k <= s, p = 0, N % s = 0), and
/// only when both layouts are the same, so every slab is an independent pooling problem. Throws
/// neuronsim::Error naming `kernel` when spatial is asked for but impossible.
/// `haloFallback`: spatial asked for but impossible returns nothing (halo slabs run instead).
std::optional<SlabSplit> chooseSlabs(std::string_view kernel, const PoolingConfig& config,
                                     const PoolSchedule& schedule, int32_t partitions,
                                     bool haloFallback = false);

/// What a kernel owns in a halo slab: outputs (forward) or inputs (backward); max backward
/// cuts H only where it is unpadded.
enum class HaloKind : uint8_t { Forward, Backward, MaxBackward };

/// The halo slab problem (HaloSlabs) when the schedule's layout allows slabs (spatial, or auto
/// with B*C under half of `partitions` and planes of at least 4096 elements) and both layouts
/// are NCDHW: D and H cut into the most
/// slabs (product up to partitions / (B*C), D preferred on ties) of whole outputs (forward: Do
/// divisible) or whole strides of inputs (backward: D divisible, slab a multiple of the
/// stride), each slab loading its halo.
std::optional<PoolingConfig> haloSlabConfig(const PoolingConfig& config,
                                            const PoolSchedule& schedule, HaloKind kind,
                                            int32_t partitions);

/// The problem each slab is: B*slabs batches (NDHWC) or C*slabs channels (NCDHW), D = lengthD,
/// H = lengthH.
PoolingConfig slabConfig(const PoolingConfig& config, const SlabSplit& split);

/// `view` (a 5-D tensor in `layout`, input or output extents) cut into the split's slab
/// counts, as the 6-D view PlaneTensor reads: NCDHW [B, C*slabsD, slabsH, D/slabsD, H/slabsH, W],
/// NDHWC [B*slabsD, slabsH, D/slabsD, H/slabsH, W, C].
HbmView slabView(const HbmView& view, PoolLayout layout, const SlabSplit& split);

}  // namespace neuronsim::kernels
