// The slab layout's depth splits, its SBUF fit and auto's estimate against the phase layout.

#include "kernels/conv/conv_transpose_slabs.h"

#include <algorithm>

#include "isa/size_limits.h"

namespace neuronsim::kernels {

int64_t slabSplits(const ConvCore& core, const isa::Geometry& geometry) {
  const int64_t parts = geometry.peTile(), width = std::min(core.cout, parts);
  int64_t splits = 1;
  for (int64_t k = 1; k <= core.in[0] && k * width <= parts; ++k)
    if (core.in[0] % k == 0) splits = k;
  return splits;
}

bool slabsFit(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry) {
  const int64_t parts = geometry.peTile(), bytes = isa::dtypeBytes(dtype);
  const int64_t plane = core.in[1] * core.in[2], splits = slabSplits(core, geometry);
  const int64_t x = isa::ceilDiv(core.cin, parts) * core.in[0] * plane * bytes;
  const int64_t outs = core.in[0] / splits * plane * core.tapCount() * bytes;
  const int64_t filters = isa::ceilDiv(core.cin, parts) * core.tapCount() * core.cout *
                          (splits > 1 ? splits * splits + 1 : 1) * bytes;
  return kSlabSlots * (x + outs) + filters <= geometry.sbufPartitionBytes / 2;
}

bool slabsPay(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry) {
  const double hbm = geometry.hbmBytesPerPeCycle, dma = geometry.dmaBytesPerPeCycle;
  const double strided = geometry.dmaStridedHbmEfficiency;
  if (hbm <= 0 || dma <= 0 || strided <= 0 || strided >= 1) return false;
  const int64_t parts = geometry.peTile(), bytes = isa::dtypeBytes(dtype);
  const int64_t positions = core.batch * core.in[0] * core.in[1] * core.in[2];
  const int64_t ciTiles = isa::ceilDiv(core.cin, parts), coTiles = isa::ceilDiv(core.cout, parts);
  const auto x = static_cast<double>(positions * core.cin * bytes);
  const auto filters = static_cast<double>(core.tapCount() * core.cin * core.cout * bytes);
  const auto out = static_cast<double>(positions * core.tapCount() * core.cout * bytes);
  const double phases = std::max((x + filters + out) / (strided * hbm), (x + filters + out) / dma);
  const double load = std::max((x + filters / strided) / hbm, (x + filters) / dma);
  const double perColumn = dtype == isa::Dtype::Fp32 ? geometry.fp32MatmulFactor : 1.0;
  const double pe =
      static_cast<double>(positions * core.tapCount() * coTiles * ciTiles) * perColumn;
  const int64_t splits = slabSplits(core, geometry), rows = splits * std::min(core.cout, parts);
  const double evictGhz = geometry.accessConflicts
                              ? std::max(geometry.vectorGhz, geometry.scalarGhz)
                              : geometry.vectorGhz + geometry.scalarGhz;
  const double evict = static_cast<double>(positions * core.tapCount() * coTiles / splits) *
                       geometry.peGhz / evictGhz;
  const double store =
      out / std::min(hbm, dma * static_cast<double>(rows) / static_cast<double>(parts));
  return load + std::max(pe, evict) + store < phases;
}

}  // namespace neuronsim::kernels
