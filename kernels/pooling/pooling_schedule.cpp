// The pooling kernels' schedule parameters: table, defaults and range checks.

#include "kernels/pooling/pooling_schedule.h"

#include <fmt/format.h>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

/// The integer parameter `name` when set (and not empty), checked against [lo, hi].
int64_t intParam(std::string_view kernel, const ParamValues& params, const std::string& name,
                 int64_t fallback, int64_t lo, int64_t hi) {
  if (!params.has(name)) return fallback;
  const int64_t value = params.getInt(name);
  if (value < lo || value > hi) {
    throw Error(fmt::format("{}: {} {} is not in {}..{}", kernel, name, value, lo, hi));
  }
  return value;
}

}  // namespace

std::vector<ParamSpec> poolScheduleParamSpecs(ScheduleKnobs knobs) {
  std::vector<ParamSpec> specs = {
      {"buffers",
       ParamType::Int,
       "",
       knobs == ScheduleKnobs::Common
           ? "schedule: buffer sets rotated over work items, 1-4 (auto 3)"
           : "schedule: buffer sets rotated over work items, 1-4 (auto 2)",
       {}},
      {"chunks",
       ParamType::Int,
       "",
       "schedule: work items per row tile when a plane fits SBUF, 1-64 (auto: ~4 items in all)",
       {}},
      {"load_queues",
       ParamType::Int,
       "",
       "schedule: DMA queues loads spread over, 1-8 (auto 1: one queue completes in order, so the "
       "first item's data arrive first)",
       {}},
      {"store_queues",
       ParamType::Int,
       "",
       "schedule: DMA queues stores spread over, 1-8 (auto 4)",
       {}},
  };
  if (knobs == ScheduleKnobs::MaxBackward) {
    specs.push_back({"gpsimd_share",
                     ParamType::Int,
                     "",
                     "schedule: percent of the output box whose key sweeps run on GpSimd "
                     "(the rest on VectorE), 0-100 (auto: balanced by a cost estimate)",
                     {}});
    specs.push_back({"key_ring",
                     ParamType::Int,
                     "",
                     "schedule: key buffers per set (sweep look-ahead), 1-16 (auto: 12, fewer when "
                     "SBUF is short)",
                     {}});
  }
  specs.push_back(
      {"layout",
       ParamType::Enum,
       "auto",
       "schedule: planes on partitions (channels), D and H slabs of a plane on "
       "partitions (spatial), or auto (spatial when B*C fills under half the partitions)",
       {"auto", "channels", "spatial"}});
  return specs;
}

PoolSchedule poolSchedule(std::string_view kernel, const ParamValues& params) {
  PoolSchedule s;
  s.buffers = static_cast<int>(intParam(kernel, params, "buffers", s.buffers, 1, 4));
  s.chunksPerTile = intParam(kernel, params, "chunks", s.chunksPerTile, 1, 64);
  s.loadQueues = static_cast<int32_t>(intParam(kernel, params, "load_queues", s.loadQueues, 1, 8));
  s.storeQueues =
      static_cast<int32_t>(intParam(kernel, params, "store_queues", s.storeQueues, 1, 8));
  s.gpsimdPercent = intParam(kernel, params, "gpsimd_share", -1, 0, 100);
  s.keyRing = static_cast<int>(intParam(kernel, params, "key_ring", s.keyRing, 1, 16));
  if (params.has("layout")) {
    const std::string& layout = params.getString("layout");
    if (layout == "channels") s.partitioning = PoolPartitioning::Channels;
    if (layout == "spatial") s.partitioning = PoolPartitioning::Spatial;
  }
  return s;
}

PoolSchedule poolForwardSchedule(std::string_view kernel, const ParamValues& params) {
  PoolSchedule s = poolSchedule(kernel, params);
  if (!params.has("buffers")) s.buffers = 3;
  return s;
}

}  // namespace neuronsim::kernels
