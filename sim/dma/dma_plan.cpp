// The per-engine split of a DMA transfer.
#include "sim/dma/dma_plan.h"

#include <algorithm>
#include <numeric>

namespace neuronsim::sim {

int64_t contiguousRun(const isa::AccessPattern& ap) {
  int64_t run = 1;
  for (auto it = ap.dims.rbegin(); it != ap.dims.rend(); ++it) {
    if (it->num == 1) continue;
    if (it->step != run) break;
    run *= it->num;
  }
  return run;
}

DmaPlan planDma(const isa::Instruction& inst, const MachineConfig& machine) {
  DmaPlan plan;
  const isa::AccessPattern& src = inst.srcs.at(0);
  const isa::AccessPattern& dst = inst.dst;
  const bool transpose = inst.opcode == isa::Opcode::DmaTranspose;
  const isa::AccessPattern& rowSide = dst.space != isa::Space::Hbm ? dst : src;
  const int64_t rows = std::max<int32_t>(1, rowSide.partitionCount);
  const int64_t elements = dst.numElements();
  const int64_t rowElements = std::max<int64_t>(1, elements / rows);
  const int64_t srcBytes = isa::dtypeBytes(src.dtype), dstBytes = isa::dtypeBytes(dst.dtype);
  const int64_t moveBytes = std::max(srcBytes, dstBytes);
  int64_t run = transpose ? rowElements : std::gcd(contiguousRun(src), contiguousRun(dst));
  run = std::clamp<int64_t>(run, 1, rowElements);
  const int64_t descPerRow = (rowElements + run - 1) / run;
  double efficiency = 1.0;
  if (transpose)
    efficiency = src.space == isa::Space::Hbm ? machine.dmaTransposeHbmEfficiency
                                              : machine.dmaTransposeSbufEfficiency;
  const int64_t hbmPerElement =
      (src.space == isa::Space::Hbm ? srcBytes : 0) + (dst.space == isa::Space::Hbm ? dstBytes : 0);

  const int64_t engines = std::min<int64_t>(rows, machine.dmaEngines);
  const int64_t base = rows / engines, extra = rows % engines;
  const int32_t first = std::max(0, inst.dmaQueue) % machine.dmaEngines;
  plan.parts.reserve(static_cast<size_t>(engines));
  for (int64_t i = 0; i < engines; ++i) {
    const int64_t partRows = base + (i < extra ? 1 : 0);
    DmaPart part;
    part.engine = static_cast<int32_t>((first + i) % machine.dmaEngines);
    const int64_t partElements = partRows * rowElements;
    part.bytes = partElements * dstBytes;
    part.hbmBytes = partElements * hbmPerElement;
    part.descriptors = partRows * descPerRow;
    part.workNs =
        static_cast<double>(partElements * moveBytes) / (machine.dmaEngineBytesPerNs * efficiency) +
        static_cast<double>(part.descriptors) * machine.dmaDescriptorNs;
    plan.bytes += part.bytes;
    plan.hbmBytes += part.hbmBytes;
    plan.descriptors += part.descriptors;
    plan.parts.push_back(part);
  }
  return plan;
}

}  // namespace neuronsim::sim
