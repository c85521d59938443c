#pragma once
// The slab layout of the kernel = stride path: each output partition holds one contiguous run of
// a channel's outputs, so every DMA's HBM side is one range (machines that charge strided rows).

#include "isa/geometry.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// Depth splits per output channel: the largest divisor k of D with k x min(C_out, PE tile) <=
/// PE tile (partition co * k + h holds output depths [h, h + 1) x D_out / k of channel co).
int64_t slabSplits(const ConvCore& core, const isa::Geometry& geometry);

/// x loads and stores in flight with slabs (one batch's each: the next batch loads and computes
/// while the last one's store moves).
inline constexpr int kSlabSlots = 2;

/// True when kSlabSlots batches' x and outputs and the padded filters fit half a partition.
bool slabsFit(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry);

/// True when auto takes slabs (a scheduling estimate in PE cycles, not the cost model): the phase
/// layout's DMAs all have strided HBM rows, so its bytes count 1 / dmaStridedHbmEfficiency
/// times against the HBM share; slabs load x and store the outputs as contiguous ranges but
/// serialize the loads, the matmuls (unstacked: one per kd phase) or evictions, and the store.
bool slabsPay(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
