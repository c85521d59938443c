#pragma once
// A sweep's grid: the parameter axes, their cartesian product in a fixed order, and shards of it.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"

namespace neuronsim::kernels {

/// One swept parameter and its values (command-line texts; an int3 or int6 value is written
/// with colons, 2:2:3, since commas separate values).
struct SweepAxis {
  std::string param;
  std::vector<std::string> values;
};

/// One configuration: its position in the grid and its parameter texts in axis order.
struct SweepPoint {
  int64_t index = 0;
  std::vector<std::pair<std::string, std::string>> params;
};

/// "NAME=v1,v2,..." -> an axis; a bare "NAME" takes the parameter's sweep candidates
/// (sweepCandidates). Throws neuronsim::Error "sweep: --param ...: <rule>".
SweepAxis parseAxis(const KernelSpec& spec, const std::string& text);
/// The axes of a sweep given no --param: every schedule parameter that declares candidates.
/// Throws neuronsim::Error when the kernel has none.
std::vector<SweepAxis> scheduleAxes(const KernelSpec& spec);
/// The cartesian product of `axes`, the last axis varying fastest. Each parameter must be one
/// of `spec`'s, named once, with distinct values, and every value must parse (parseParams);
/// at most kMaxSweepPoints points. Throws neuronsim::Error naming the culprit.
std::vector<SweepPoint> expandGrid(const KernelSpec& spec, const std::vector<SweepAxis>& axes);
/// The largest grid a sweep accepts.
inline constexpr int64_t kMaxSweepPoints = 1'000'000;

/// Shard `index` of `count` (1-based index, as in "--shard 2/3"): every point whose grid index
/// is congruent to index - 1 modulo count, so shards get alike mixes of the grid.
struct Shard {
  int64_t index = 1;
  int64_t count = 1;
};
/// "I/N" with 1 <= I <= N. Throws neuronsim::Error "sweep: --shard ...".
Shard parseShard(const std::string& text);
std::vector<SweepPoint> shardOf(const std::vector<SweepPoint>& points, Shard shard);

}  // namespace neuronsim::kernels
