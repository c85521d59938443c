#pragma once
// The machine a trace was simulated on, as plain data: traces/ never links the simulator, so
// the harness fills this from the machine config and the trace carries it.

#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "isa/instruction.h"

namespace neuronsim::traces {

/// Machine parameters recorded in a trace (`neuronsim.machine`).
struct MachineFacts {
  std::string name;  ///< trn2, trn1, a file name; empty when unknown (an old trace)
  /// Every parameter by its preset key (pe_throttle, dma_latency_ns, dma_engine_bytes_per_ns, ...).
  nlohmann::json params = nlohmann::json::object();
  /// Per engine (isa::Engine order): ns from an instruction's end until its results land and its
  /// Complete signals fire (the pipeline latency).
  std::array<double, isa::kNumEngines> pipelineLatencyNs{};
  /// ns from a compute engine's signal until a waiting engine sees it (DMA signals carry none).
  double semaphoreHandoffNs = 0;

  bool known() const { return !name.empty(); }
  /// params[key] as a number, or `fallback` when absent or not a number.
  double number(const std::string& key, double fallback) const;
  /// params[key] as a flag, or `fallback` when absent or not a boolean.
  bool flag(const std::string& key, bool fallback) const;
};

nlohmann::json machineFactsJson(const MachineFacts& machine);
/// The inverse of machineFactsJson; an absent or malformed section gives an unknown machine.
MachineFacts machineFactsFrom(const nlohmann::json& section);

}  // namespace neuronsim::traces
