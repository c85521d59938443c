#pragma once
// The shape of on-chip memory that programs are validated and run against.

#include <algorithm>
#include <cstdint>

namespace neuronsim::isa {

/// The most DMA queues the simulator's fixed-size tables hold (D1: 16 per engine).
inline constexpr int32_t kMaxDmaQueues = 16;

/// Defaults are Trn2 (reference 1.2-1.3, A2); the machine config supplies the real values.
struct Geometry {
  int32_t partitions = 128;
  int32_t peRows = 128;  ///< PE array rows: nc_matmul contraction K (A1/A2 1.2: 128x128)
  int32_t peCols = 128;  ///< PE array columns: nc_matmul stationary free size M
  int64_t sbufPartitionBytes = 224 * 1024;
  int64_t psumPartitionBytes = 16 * 1024;
  int32_t psumBanks = 8;
  int32_t maxMovingFree = 512;  ///< nc_matmul moving free size (v2/v3)
  int32_t dmaQueues = 16;       ///< DMA queues 0..dmaQueues-1 (per DMA engine, D1)
  /// The core's HBM bytes per TensorE cycle (hbm_gbps / pe_ghz), set by loadMachine for
  /// kernels' scheduling heuristics; 0: unknown (no machine).
  double hbmBytesPerPeCycle = 0;
  /// The DMA engines' summed bytes per TensorE cycle (dma_engines x dma_engine_bytes_per_ns /
  /// pe_ghz) and their count (each serves partitions / dmaEngines rows), set by loadMachine for
  /// kernels' scheduling heuristics; 0: unknown.
  double dmaBytesPerPeCycle = 0;
  int32_t dmaEngines = 16;
  /// A hwdge DMA trigger's hold on its issuing engine and a transfer part's engine overhead (ns),
  /// copied by loadMachine for kernels' scheduling heuristics (the preset's dma_trigger_ns and
  /// dma_transfer_overhead_ns; defaults Trn2).
  double dmaTriggerNs = 600;
  double dmaTransferOverheadNs = 230;
  /// The HBM share left to DMAs reading HBM rows at a stride (dma_strided_hbm_efficiency), set by
  /// loadMachine for kernels' scheduling heuristics.
  double dmaStridedHbmEfficiency = 1;
  /// Engine clocks (GHz) and the fp32 nc_matmul cost factor, copied by loadMachine for kernels'
  /// scheduling heuristics (the preset's dve/act/pool_ghz and fp32_matmul_factor; defaults Trn2).
  double vectorGhz = 0.96;
  double scalarGhz = 1.2;
  double gpsimdGhz = 1.2;
  double fp32MatmulFactor = 4;
  /// TensorE's clock (GHz) and whether VectorE has its bf16/fp16 performance modes (A2), copied
  /// by loadMachine for kernels' scheduling heuristics (the preset's pe_ghz and
  /// vector_perf_mode; defaults Trn2).
  double peGhz = 2.4;
  bool vectorPerfMode = true;
  /// NC-v2's shared VectorE/GpSimd SBUF port, GpSimd's fixed start per instruction and the
  /// VectorE/ScalarE floor per instruction (MIN_II), copied by loadMachine for kernels' engine
  /// balance (the preset's access_conflicts, gpsimd_start_cycles and min_ii_cycles; defaults
  /// Trn2).
  bool accessConflicts = false;
  int64_t gpsimdStartCycles = 150;
  int64_t minIiCycles = 64;
  /// TensorE's matmul floor and LoadStationary rates, copied by loadMachine for kernels'
  /// scheduling heuristics (the preset's mm_min_cycles, ls_speedup and ls_speedup_fp32: a
  /// stationary of M columns loads in M / lsSpeedup PE cycles, fp32 in M x fp32MatmulFactor /
  /// lsSpeedupFp32; defaults Trn2).
  int64_t matmulMinCycles = 64;
  double lsSpeedup = 4;
  double lsSpeedupFp32 = 1;
  int64_t psumBankBytes() const { return psumPartitionBytes / psumBanks; }
  /// The PSUM banks (bit per bank) that bytes [byteBegin, byteEnd) of a partition touch; banks
  /// past the 64th (or past the last) share the last bit. Empty for an empty range.
  uint64_t psumBankMask(int64_t byteBegin, int64_t byteEnd) const {
    if (byteEnd <= byteBegin) return 0;
    const int64_t last = std::min<int64_t>(psumBanks, 64) - 1;
    const int64_t lo = std::clamp<int64_t>(byteBegin / psumBankBytes(), 0, last);
    const int64_t hi = std::clamp<int64_t>((byteEnd - 1) / psumBankBytes(), 0, last);
    return (~0ull >> (63 - hi)) & (~0ull << lo);
  }
  /// Partitions per half: Vector, Scalar and GpSimd move data across partitions only within one
  /// half (A1, reference 1.3).
  int32_t partitionHalf() const { return std::max(1, partitions / 2); }
  /// Largest nc_matmul K (and TensorE transpose input partitions): PE rows, within the partitions.
  int64_t maxContraction() const { return std::min(partitions, peRows); }
  /// Largest nc_matmul M (and TensorE transpose input free size): PE columns, within the
  /// partitions.
  int64_t maxStationaryFree() const { return std::min(partitions, peCols); }
  /// The largest square TensorE tile (K = M): what kernels tile contraction and output rows by.
  int64_t peTile() const { return std::min(maxContraction(), maxStationaryFree()); }
  /// Largest nc_matmul N whose fp32 result fits one PSUM bank (maxMovingFree within the bank).
  int64_t matmulFreeFp32() const { return std::min<int64_t>(maxMovingFree, psumBankBytes() / 4); }
  /// Partitions each DMA engine serves (D1: engine e the e-th group of consecutive partitions).
  int64_t partitionsPerDmaEngine() const {
    return std::max<int64_t>(1, partitions / std::max(1, dmaEngines));
  }
};

}  // namespace neuronsim::isa
