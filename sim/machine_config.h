#pragma once
// A NeuronCore's parameters (clocks, widths, latencies, bandwidths), loaded from a preset.

#include <string>
#include <vector>

#include "isa/geometry.h"

namespace neuronsim::sim {

/// Resolved machine parameters. Every number comes from sim/machines/<name>.json, where each
/// carries its source key in the reference or says `assumption` and why.
/// (The sim helper completes the field list; kernels read only name, geometry and the peak
/// figures below.)
struct MachineConfig {
  std::string name;          ///< trn2, trn1, or the file's "name"
  isa::Geometry geometry;
  double peGhz = 2.4;        ///< TensorE clock
  double hbmGBps = 0;        ///< this core's HBM bandwidth (GB/s = B/ns)
  double peakBf16Flops() const { return 2.0 * 128 * 128 * peGhz * 1e9; }
};

/// Loads a preset by name (trn2, trn1) or a JSON file path, then applies KEY=VALUE
/// overrides. Throws neuronsim::Error naming an unknown key or a bad value.
MachineConfig loadMachine(const std::string& nameOrPath, const std::vector<std::string>& overrides = {});

}  // namespace neuronsim::sim
