#pragma once
// Run totals and the neuron-profile-style summary derived from them (DESIGN.md section 4).

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "isa/instruction.h"
#include "traces/tick.h"

namespace neuronsim::traces {

struct EngineTotals {
  Tick busy;  ///< issue time (the engine's own work), semaphore waits and throttling excluded
  int64_t instructions = 0;
  /// neuron-profile's active time (R2, `ActiveTime`): the union of the instruction spans, each
  /// from the start of execution (a throttled TensorE instruction runs slowed down from where it
  /// was held) to its last result landing; semaphore waits excluded.
  Tick active;
};

/// What a timed run measured (filled by sim::simulate).
struct RunTotals {
  Tick total;  ///< the last result landed
  std::array<EngineTotals, isa::kNumEngines> engines{};
  int64_t instructions = 0;
  int64_t dmaBytes = 0;
  int64_t dmaTransfers = 0;
  Tick dmaActive;        ///< time at least one transfer was moving data
  int64_t hbmBytes = 0;  ///< bytes that crossed HBM (read + written)
  int64_t flops = 0;     ///< raw matmul flops executed (2 per MAC)
  int64_t transposeFlops = 0;
  int64_t sbufReadBytes = 0;
  int64_t sbufWriteBytes = 0;
  double hostSeconds = 0;
};

/// What the caller knows about the run (filled by the CLI from the kernel and machine).
struct RunInfo {
  std::string kernel;         ///< kernel name, or the asm file
  std::string machine;        ///< trn2, trn1, ...
  std::string dtype;          ///< fp32, bf16
  double peakFlopsPerNs = 0;  ///< PE peak at this dtype (flop/ns)
  double hbmBytesPerNs = 0;   ///< this core's HBM bandwidth (B/ns)
  int64_t minHbmBytes = 0;    ///< bytes the kernel must move at minimum (inputs + outputs)
  /// Flops the kernel must compute (the roofline's compute term, capped by the executed flops);
  /// negative: the executed flops.
  double mustFlops = -1;
};

/// Summary JSON with at least the DESIGN.md keys: kernel, machine, dtype, total_ns,
/// instructions, engines{tensor,vector,scalar,gpsimd,sync}{busy_ns,active_ns,active_percent,
/// instructions}, dma{bytes,transfers,active_percent,achieved_gbps}, flops, mfu_percent,
/// hbm_bytes, mbu_percent, roofline_ns, roofline_percent, host_seconds,
/// sim_instructions_per_second.
nlohmann::json summaryJson(const RunInfo& info, const RunTotals& totals);
/// The same as a short human-readable block.
std::string summaryText(const nlohmann::json& summary);

}  // namespace neuronsim::traces
