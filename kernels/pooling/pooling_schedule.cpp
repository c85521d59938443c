// The pooling kernels' schedule parameters: table, defaults and range checks.

#include "kernels/pooling/pooling_schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"

namespace neuronsim::kernels {

std::vector<ParamSpec> poolScheduleParamSpecs(ScheduleKnobs knobs) {
  const auto halfTheQueues = [](const isa::Geometry& g) -> int64_t {
    return std::max(1, g.dmaQueues / 2);
  };
  const std::string kHalf = "loads and stores each get half of the machine's DMA queues";
  std::vector<ParamSpec> specs = {
      scheduleParam("buffers", ParamType::Int,
                    knobs == ScheduleKnobs::Common
                        ? "buffer sets rotated over work items, 1-4 (auto 3)"
                        : "buffer sets rotated over work items, 1-4 (auto 2)",
                    {"1", "2", "3", "4"})
          .within(1, 4),
      scheduleParam("chunks", ParamType::Int,
                    "work items per row tile when a plane fits SBUF, 1-64 (auto: ~4 items in all)",
                    {"1", "2", "4", "8"})
          .within(1, 64),
      scheduleParam(
          "load_queues", ParamType::Int,
          "DMA queues loads spread over, 1 to half the machine's queues (auto 1: one queue "
          "completes in order, so the first item's data arrive first; all 8 for halo slabs)",
          {"1", "2", "4", "8"})
          .within(1, halfTheQueues, kHalf),
      scheduleParam("store_queues", ParamType::Int,
                    "DMA queues stores spread over, 1 to half the machine's queues (auto 4)",
                    {"1", "2", "4", "8"})
          .within(1, halfTheQueues, kHalf),
  };
  if (knobs == ScheduleKnobs::MaxBackward) {
    specs.push_back(scheduleParam("gpsimd_share", ParamType::Int,
                                  "percent of the output box whose compare sweeps run on GpSimd "
                                  "(the rest on VectorE), 0-100 (auto: the share that finishes "
                                  "VectorE, GpSimd and ScalarE earliest by a cost estimate from "
                                  "the machine's engine rates)",
                                  {"0", "20", "30", "40", "50"})
                        .within(0, 100));
    specs.push_back(scheduleParam("key_ring", ParamType::Int,
                                  "key buffers per set (sweep look-ahead), 1-16 (auto: 16, fewer "
                                  "when SBUF is short)",
                                  {"4", "8", "12", "16"})
                        .within(1, 16));
  }
  if (knobs == ScheduleKnobs::Common) {
    specs.push_back(scheduleParam(
        "acc_engines", ParamType::Enum,
        "accumulator chains the window taps are dealt to in turn, each a VectorE (v) or GpSimd "
        "(g) chain; several chains keep an engine from waiting on its previous instruction "
        "(auto: vg, or vvg for more than 8 taps on output boxes under 512 elements)",
        {}, {"auto", "v", "vv", "vg", "vvg", "vvgg", "vvvg"}));
  }
  specs.push_back(scheduleParam("layout", ParamType::Enum,
                                "planes on partitions (channels), D and H slabs of a plane on "
                                "partitions (spatial), or auto (spatial when B*C fills under half "
                                "the partitions)",
                                {}, {"auto", "channels", "spatial"}));
  return specs;
}

PoolSchedule poolSchedule(std::string_view kernel, const ParamValues& params,
                          const isa::Geometry& geometry) {
  PoolSchedule s;
  const int32_t half = std::max(1, geometry.dmaQueues / 2);
  s.buffers = static_cast<int>(params.intIn(kernel, "buffers", s.buffers, 1, 4));
  s.chunksPerTile = params.intIn(kernel, "chunks", s.chunksPerTile, 1, 64);
  s.firstStoreQueue = geometry.dmaQueues - half;
  const auto queues = [&](const std::string& name, int32_t fallback) {
    const int64_t count =
        params.intIn(kernel, name, std::min(fallback, half), 1, geometry.dmaQueues);
    if (count > half) {
      throw Error(
          fmt::format("{}: {} {} is more than {}: loads and stores each get half of the "
                      "machine's {} DMA queues",
                      kernel, name, count, half, geometry.dmaQueues));
    }
    return static_cast<int32_t>(count);
  };
  s.loadQueues = queues("load_queues", s.loadQueues);
  s.storeQueues = queues("store_queues", s.storeQueues);
  s.gpsimdPercent = params.intIn(kernel, "gpsimd_share", -1, 0, 100);
  s.keyRing = static_cast<int>(params.intIn(kernel, "key_ring", s.keyRing, 1, 16));
  if (params.has("acc_engines") && params.getString("acc_engines") != kAuto) {
    s.accEngines.clear();
    for (char c : params.getString("acc_engines"))
      s.accEngines.push_back(c == 'g' ? isa::Engine::GpSimd : isa::Engine::Vector);
  }
  if (params.has("layout")) {
    const std::string& layout = params.getString("layout");
    if (layout == "channels") s.partitioning = PoolPartitioning::Channels;
    if (layout == "spatial") s.partitioning = PoolPartitioning::Spatial;
  }
  return s;
}

std::vector<isa::Engine> forwardAccEngines(int64_t taps, int64_t boxOutputs) {
  constexpr int64_t kFewTaps = 8, kLargeBox = 512;
  using isa::Engine;
  if (taps <= kFewTaps || boxOutputs >= kLargeBox) return {Engine::Vector, Engine::GpSimd};
  return {Engine::Vector, Engine::Vector, Engine::GpSimd};
}

PoolSchedule poolForwardSchedule(std::string_view kernel, const ParamValues& params,
                                 const isa::Geometry& geometry) {
  PoolSchedule s = poolSchedule(kernel, params, geometry);
  if (!params.has("buffers")) s.buffers = 3;
  return s;
}

}  // namespace neuronsim::kernels
