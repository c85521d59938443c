// The per-engine split of a DMA transfer and its engine time.
#include "sim/dma/dma_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "isa/size_limits.h"
#include "sim/core/rounding.h"

namespace neuronsim::sim {
namespace {

constexpr double kFsPerNs = 1e6;

/// Calls fn(engine, rows) for each engine's consecutive rows of a transfer, in engine order:
/// an on-chip side's partitions by the engine of each partition, else `rows` HBM rows spread
/// over min(rows, dma_engines) engines in contiguous groups.
template <typename Fn>
void forEachRowGroup(bool onChip, const isa::AccessPattern& side, int64_t rows,
                     const MachineConfig& m, Fn&& fn) {
  if (!onChip) {
    const int64_t engines = std::min<int64_t>(rows, m.geometry.dmaEngines);
    const int64_t base = rows / engines, extra = rows % engines;
    for (int64_t i = 0; i < engines; ++i) fn(static_cast<int32_t>(i), base + (i < extra ? 1 : 0));
    return;
  }
  const int64_t first = side.partitionStart;
  const int64_t last = first + std::max<int32_t>(1, side.partitionCount) - 1;
  const int64_t perEngine = m.geometry.partitionsPerDmaEngine();
  for (int64_t p = first; p <= last;) {
    const int32_t engine = dmaEngineOfPartition(p, m);
    // Its group ends where the next engine's begins; the last engine takes the rest.
    const int64_t end =
        engine == m.geometry.dmaEngines - 1 ? last : std::min(last, (engine + 1) * perEngine - 1);
    fn(engine, end - p + 1);
    p = end + 1;
  }
}

/// Engine-time bytes of one row: each descriptor of `run` elements moves at least
/// dma_min_descriptor_bytes.
int64_t paddedRowBytes(int64_t rowElements, int64_t run, int64_t elementBytes, int64_t minBytes) {
  const int64_t full = rowElements / run, rest = rowElements % run;
  int64_t bytes = full * std::max(run * elementBytes, minBytes);
  if (rest > 0) bytes += std::max(rest * elementBytes, minBytes);
  return bytes;
}

EngineFs engineFs(double ns) {
  return static_cast<EngineFs>(roundHalfAway(ns * kFsPerNs));
}

}  // namespace

int64_t contiguousRun(const isa::AccessPattern& ap) {
  int64_t run = 1;
  for (auto it = ap.dims.rbegin(); it != ap.dims.rend(); ++it) {
    if (it->num == 1) continue;
    if (it->step != run) break;
    run *= it->num;
  }
  return run;
}

bool hbmContiguous(const isa::AccessPattern& ap) {
  const int64_t rowElements = ap.freeSize();
  if (contiguousRun(ap) != rowElements) return false;
  return ap.partitionCount <= 1 || ap.partitionStep == rowElements;
}

int32_t dmaEngineOfPartition(int64_t partition, const MachineConfig& machine) {
  return static_cast<int32_t>(std::min<int64_t>(
      partition / machine.geometry.partitionsPerDmaEngine(), machine.geometry.dmaEngines - 1));
}

DmaPlan planDma(const isa::Instruction& inst, const MachineConfig& machine) {
  DmaPlan plan;
  const isa::AccessPattern& src = inst.srcs.at(0);
  const isa::AccessPattern& dst = inst.dst;
  const bool transpose = inst.opcode == isa::Opcode::DmaTranspose;
  const bool dstOnChip = dst.space != isa::Space::Hbm;
  const bool onChip = dstOnChip || src.space != isa::Space::Hbm;
  const isa::AccessPattern& rowSide = dstOnChip ? dst : src;
  const int64_t rows = std::max<int32_t>(1, rowSide.partitionCount);
  const int64_t rowElements = std::max<int64_t>(1, dst.numElements() / rows);
  const int64_t srcBytes = isa::dtypeBytes(src.dtype), dstBytes = isa::dtypeBytes(dst.dtype);
  const int64_t moveBytes = std::max(srcBytes, dstBytes);
  int64_t run = transpose ? rowElements : std::gcd(contiguousRun(src), contiguousRun(dst));
  run = std::clamp<int64_t>(run, 1, rowElements);
  const int64_t descPerRow = isa::ceilDiv(rowElements, run);
  const int64_t rowWorkBytes =
      paddedRowBytes(rowElements, run, moveBytes, machine.dmaMinDescriptorBytes);
  double efficiency = 1.0;
  if (transpose)
    efficiency = src.space == isa::Space::Hbm ? machine.dmaTransposeHbmEfficiency
                                              : machine.dmaTransposeSbufEfficiency;
  const double nsPerByte = 1.0 / (machine.dmaEngineBytesPerNs * efficiency);
  const int64_t hbmPerElement =
      (src.space == isa::Space::Hbm ? srcBytes : 0) + (dst.space == isa::Space::Hbm ? dstBytes : 0);
  const bool strided = (src.space == isa::Space::Hbm && !hbmContiguous(src)) ||
                       (dst.space == isa::Space::Hbm && !hbmContiguous(dst));
  const double hbmLoadFactor = strided ? 1.0 / machine.geometry.dmaStridedHbmEfficiency : 1.0;

  const EngineFs overheadFs = engineFs(machine.geometry.dmaTransferOverheadNs);
  plan.parts.reserve(static_cast<size_t>(machine.geometry.dmaEngines));
  forEachRowGroup(onChip, rowSide, rows, machine, [&](int32_t engine, int64_t groupRows) {
    DmaPart part;
    part.engine = engine;
    part.rows = groupRows;
    part.bytes = groupRows * rowElements * dstBytes;
    part.hbmBytes = groupRows * rowElements * hbmPerElement;
    part.hbmLoadBytes = roundHalfAway(static_cast<double>(part.hbmBytes) * hbmLoadFactor);
    part.descriptors = groupRows * descPerRow;
    part.dataFs = engineFs(static_cast<double>(groupRows * rowWorkBytes) * nsPerByte);
    part.overheadFs = overheadFs;
    plan.bytes += part.bytes;
    plan.hbmBytes += part.hbmBytes;
    plan.descriptors += part.descriptors;
    plan.parts.push_back(part);
  });
  return plan;
}

}  // namespace neuronsim::sim
