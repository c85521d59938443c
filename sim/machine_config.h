#pragma once
// A NeuronCore's parameters (clocks, widths, latencies, bandwidths), loaded from a preset.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "isa/geometry.h"

namespace neuronsim::sim {

/// Resolved machine parameters. Every number comes from sim/machines/<name>.json, where each
/// carries its source key in the reference or says `assumption` and why. Defaults here are
/// only placeholders; loadMachine() sets every field from the preset. Values that kernels'
/// planners read too (clocks, TensorE and DMA costs) live on `geometry` only.
struct MachineConfig {
  std::string name;  ///< trn2, trn1, or the file's "name"
  isa::Geometry geometry;
  double hbmGBps = 0;  ///< this core's HBM bandwidth (GB/s = B/ns)
  /// 2 flops per MAC of the usable PE array (pe_rows x pe_cols within the partitions) per PE cycle.
  double peakBf16Flops() const {
    return 2.0 * static_cast<double>(geometry.maxContraction() * geometry.maxStationaryFree()) *
           geometry.peGhz * 1e9;
  }

  double syncGhz = 1.2;  ///< Sync sequencer clock (GHz): the core's base clock

  // TensorE (cycles of the PE clock).
  double fp32TransposeFactor = 4;      ///< fp32 PE transpose cost multiplier
  bool peThrottle = false;             ///< dI/dt throttle ramp present
  double throttleStartFraction = 0.5;  ///< PE rate when the throttle engages (fraction of full)
  double throttleRampNs = 3000;        ///< time to ramp from the start fraction to full rate
  double throttleWindowNs = 3000;    ///< window over which low utilization re-engages the throttle
  double throttleUtilization = 0.5;  ///< utilization below which the throttle re-engages

  // Vector / Scalar / GpSimd (cycles of each engine's clock).
  int64_t accessOverheadCycles = 60;   ///< per tensor access (pipeline latency, not throughput)
  int64_t staticOverheadCycles = 100;  ///< exposed to dependent instructions (pipeline latency)
  int64_t strideThresholdBytes = 16;   ///< innermost step above this runs at half bandwidth
  double stridedSlowdown = 2;          ///< cost multiplier of the strided case
  bool psumBankConflicts =
      false;  ///< NC-v3: Vector/Scalar accesses to a common PSUM bank serialize

  // DMA (sim/dma/; docs/timing-model.md section 3).
  int32_t dmaQueueInflight = 2;         ///< transfers of one queue in flight (latency overlapped)
  double dmaEngineBytesPerNs = 23;      ///< sustained bytes per ns per DMA engine
  double dmaLatencyNs = 1300;           ///< admission to first byte (semaphore-to-start)
  int64_t dmaMinDescriptorBytes = 64;   ///< a descriptor takes at least this many bytes' time
  bool dmaSwdge = false;                ///< GpSimd-triggered DMAs generate descriptors in software
  double dmaSwdgeDescriptorCycles = 0;  ///< GpSimd cycles per generated descriptor
  double dmaTransposeHbmEfficiency = 0.9;   ///< DMA transpose HBM->SBUF, fraction of copy rate
  double dmaTransposeSbufEfficiency = 0.5;  ///< DMA transpose SBUF->SBUF, fraction of copy rate

  // Synchronization.
  int64_t semaphoreHandoffCycles = 64;  ///< base-clock cycles from an engine's semaphore update to
                                        ///< a waiter on another engine seeing it
};

/// Loads a preset by name (trn2, trn1) or a JSON file path, then applies KEY=VALUE
/// overrides. Throws neuronsim::Error naming an unknown key, or a bad value with the key's
/// allowed range.
MachineConfig loadMachine(const std::string& nameOrPath,
                          const std::vector<std::string>& overrides = {});

/// Names of the built-in presets (trn2 first: the default).
std::vector<std::string> machinePresetNames();

/// Every parameter of `machine` by its key, as JSON numbers and booleans (what a trace records).
nlohmann::json machineParameterValues(const MachineConfig& machine);

}  // namespace neuronsim::sim
