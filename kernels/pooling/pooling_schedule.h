#pragma once
// Schedule choices of the pooling kernels (kernel parameters with automatic defaults).

#include <cstdint>
#include <string_view>
#include <vector>

#include "isa/geometry.h"
#include "isa/instruction.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

/// Where a pooling kernel puts its work: one (batch, channel) plane per partition, or slabs
/// of D and H of each plane on partitions (for few planes).
enum class PoolPartitioning : uint8_t { Auto, Channels, Spatial };

/// How a pooling kernel is scheduled; the kernels fill what is left automatic.
struct PoolSchedule {
  int buffers = 2;              ///< buffer sets rotated over the work items (1-4)
  int64_t chunksPerTile = 0;    ///< work items per row tile when a plane fits (0: automatic)
  int32_t loadQueues = 1;       ///< DMA queues the loads spread over, from queue 0
  int32_t storeQueues = 4;      ///< DMA queues the stores spread over, from firstStoreQueue
  int32_t firstStoreQueue = 8;  ///< half the machine's DMA queues: loads and stores never share
  int64_t gpsimdPercent = -1;   ///< max backward: share of the output box on GpSimd (-1: auto)
  int keyRing = 0;              ///< max backward: key buffers per set, 1-16 (0: automatic)
  PoolPartitioning partitioning = PoolPartitioning::Auto;  ///< channels or slabs
  /// forward: the engines of the accumulator chains the window taps are dealt to, in turn
  /// (empty: forwardAccEngines)
  std::vector<isa::Engine> accEngines = {};
};

/// Which schedule parameters a kernel takes.
enum class ScheduleKnobs : uint8_t { Common, MaxBackward, AvgBackward };

/// The schedule parameters (empty default: automatic) for a kernel with `knobs`.
std::vector<ParamSpec> poolScheduleParamSpecs(ScheduleKnobs knobs);

/// Reads the schedule parameters present in `params` (their declared ranges are checked before
/// the build). Loads and stores each get half of `geometry`'s DMA queues: an automatic count
/// is capped at that.
PoolSchedule poolSchedule(const ParamValues& params, const isa::Geometry& geometry);
/// The forward kernels' automatic accumulator chains for windows of `taps` taps whose largest
/// output box has `boxOutputs` elements per partition: one VectorE and one GpSimd chain (the taps
/// split evenly over the two engines: B2 C64 16x64x64 k2 139.9 -> 119.9 us against two VectorE
/// chains and one GpSimd), or those three when more than 8 taps meet boxes under 512 elements (a
/// chain's next tap waits for its previous one, which short instructions do not hide:
/// 1x128x9x9x9 k3 s2 p1 10.2 us with one chain per engine, 8.8 us with three chains).
std::vector<isa::Engine> forwardAccEngines(int64_t taps, int64_t boxOutputs);
/// poolSchedule for the forward kernels: 3 buffer sets unless given (the sweeps in
/// docs/pooling.md: up to 8% faster than 2 on large planes, within 1% elsewhere).
PoolSchedule poolForwardSchedule(const ParamValues& params, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
