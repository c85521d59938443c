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
  // The values below are the machine's, read both by sim/ (instruction and DMA costs) and by
  // kernels' planners (scheduling heuristics): they live here only, set by loadMachine from the
  // preset key named on each (docs/timing-model.md, "What isa::Geometry carries"). Defaults Trn2.

  // Engine clocks (GHz = cycles per ns).
  double peGhz = 2.4;       ///< pe_ghz: TensorE
  double vectorGhz = 0.96;  ///< dve_ghz: VectorE
  double scalarGhz = 1.2;   ///< act_ghz: ScalarE
  double gpsimdGhz = 1.2;   ///< pool_ghz: GpSimdE

  // TensorE (cycles of the PE clock). A stationary of M columns loads in M / lsSpeedup cycles,
  // an fp32 one in M x fp32MatmulFactor / lsSpeedupFp32.
  int64_t matmulMinCycles = 64;  ///< mm_min_cycles: MM_INIT_LATENCY, floor of a matmul's II
                                 ///< and its pipeline latency
  double lsSpeedup = 4;      ///< ls_speedup: LoadStationary is this much faster than a matmul of
                             ///< equal free size
  double lsSpeedupFp32 = 1;  ///< ls_speedup_fp32: the same for an fp32 nc_matmul (1: no fast load)
  double fp32MatmulFactor = 4;  ///< fp32_matmul_factor: fp32 matmul cost multiplier

  // Vector / Scalar / GpSimd (cycles of each engine's clock).
  int64_t minIiCycles = 64;         ///< min_ii_cycles: MIN_II, VectorE/ScalarE floor
  int64_t gpsimdStartCycles = 150;  ///< gpsimd_start_cycles: GPSIMD_START per instruction
  bool vectorPerfMode = true;       ///< vector_perf_mode: NC-v3 VectorE bf16/fp16 performance modes
  bool accessConflicts = false;     ///< access_conflicts: NC-v2, Vector/GpSimd on SBUF and
                                    ///< Vector/Scalar on PSUM serialize

  // DMA (sim/dma/; docs/timing-model.md section 3).
  int32_t dmaEngines = 16;    ///< dma_engines: per core; each serves partitions / dmaEngines rows
  double dmaTriggerNs = 600;  ///< dma_trigger_ns: Sync/Scalar (and non-swdge) trigger time on
                              ///< the issuing engine
  double dmaTransferOverheadNs = 230;  ///< dma_transfer_overhead_ns: engine busy time per
                                       ///< transfer part, after its data
  /// dma_strided_hbm_efficiency: fraction of hbm_gbps a DMA part can use when its HBM rows are
  /// not one contiguous range.
  double dmaStridedHbmEfficiency = 1;

  // Derived by loadMachine, for kernels' scheduling heuristics; 0: unknown (no machine).
  double hbmBytesPerPeCycle = 0;  ///< the core's HBM bytes per TensorE cycle: hbm_gbps / pe_ghz
  /// The DMA engines' summed bytes per TensorE cycle: dma_engines x dma_engine_bytes_per_ns /
  /// pe_ghz.
  double dmaBytesPerPeCycle = 0;

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
