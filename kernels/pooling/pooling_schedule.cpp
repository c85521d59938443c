// The pooling kernels' schedule parameters: table and defaults (the table declares the ranges).

#include "kernels/pooling/pooling_schedule.h"

#include <algorithm>

namespace neuronsim::kernels {

namespace {

/// The DMA queues loads get, and as many stores: half of the machine's each.
int64_t halfTheQueues(const isa::Geometry& geometry) {
  return std::max(1, geometry.dmaQueues / 2);
}

}  // namespace

std::vector<ParamSpec> poolScheduleParamSpecs(ScheduleKnobs knobs) {
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

PoolSchedule poolSchedule(const ParamValues& params, const isa::Geometry& geometry) {
  PoolSchedule s;
  s.buffers = static_cast<int>(params.intOr("buffers", s.buffers));
  s.chunksPerTile = params.intOr("chunks", s.chunksPerTile);
  const auto half = static_cast<int32_t>(halfTheQueues(geometry));
  s.firstStoreQueue = geometry.dmaQueues - half;
  s.loadQueues = static_cast<int32_t>(params.intOr("load_queues", std::min(s.loadQueues, half)));
  s.storeQueues = static_cast<int32_t>(params.intOr("store_queues", std::min(s.storeQueues, half)));
  s.gpsimdPercent = params.intOr("gpsimd_share", -1);
  s.keyRing = static_cast<int>(params.intOr("key_ring", s.keyRing));
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

PoolSchedule poolForwardSchedule(const ParamValues& params, const isa::Geometry& geometry) {
  PoolSchedule s = poolSchedule(params, geometry);
  if (!params.has("buffers")) s.buffers = 3;
  return s;
}

}  // namespace neuronsim::kernels
