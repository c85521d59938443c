// Trigger cost of a DMA on its issuing engine, by descriptor path.
#include "sim/dma/dma_trigger.h"

#include <cmath>

namespace neuronsim::sim {

DescriptorPath descriptorPath(isa::Engine issuer, const MachineConfig& machine) {
  return issuer == isa::Engine::GpSimd && machine.dmaSwdge ? DescriptorPath::GpSimd
                                                           : DescriptorPath::Hardware;
}

int64_t dmaTriggerPs(isa::Engine issuer, const DmaPlan& plan, const MachineConfig& machine) {
  double ns = machine.geometry.dmaTriggerNs;
  if (descriptorPath(issuer, machine) == DescriptorPath::GpSimd) {
    const double cycles = static_cast<double>(machine.geometry.gpsimdStartCycles) +
                          static_cast<double>(plan.descriptors) * machine.dmaSwdgeDescriptorCycles;
    ns = cycles / machine.geometry.gpsimdGhz;
  }
  return std::llround(ns * 1000.0);
}

}  // namespace neuronsim::sim
