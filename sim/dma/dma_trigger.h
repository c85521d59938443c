#pragma once
// What triggering a DMA costs the issuing engine (D3): a hardware-DGE (or precomputed)
// descriptor path from Sync/Scalar, or software descriptor generation on GpSimd (swdge).

#include <cstdint>

#include "isa/instruction.h"
#include "sim/dma/dma_plan.h"
#include "sim/machine_config.h"

namespace neuronsim::sim {

/// Who makes a DMA's descriptors.
enum class DescriptorPath : uint8_t {
  Hardware,  ///< the DGE block (NC-v3 hwdge) or host-precomputed descriptors (NC-v2)
  GpSimd,    ///< swdge: GpSimd computes every descriptor at run time
};

/// The path of a DMA triggered by `issuer` on `machine`: GpSimd triggers use swdge when
/// dma_swdge is set, every other trigger the hardware path.
DescriptorPath descriptorPath(isa::Engine issuer, const MachineConfig& machine);

/// Picoseconds the issuing engine is held by the trigger of a DMA with plan `plan`:
/// dma_trigger_ns on the hardware path; on the GpSimd path gpsimd_start_cycles plus
/// dma_swdge_descriptor_cycles per descriptor, at the GpSimd clock.
int64_t dmaTriggerPs(isa::Engine issuer, const DmaPlan& plan, const MachineConfig& machine);

}  // namespace neuronsim::sim
