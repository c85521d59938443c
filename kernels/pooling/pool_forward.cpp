// avg_pooling_3d and max_pooling_3d: one strided tensor_tensor per window tap over each output box,
// the taps dealt round robin to independent accumulators on VectorE and GpSimd (acc_engines).

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::AluOp;
using isa::Engine;

/// Shared body: acc = init; acc[tap outputs] = acc op input[tap inputs] for every tap;
/// average then scales into the output tile.
void buildForward(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                  const HbmView& out, bool isMax, const PoolSchedule& schedule) {
  const isa::Dtype dtype = input.dtype();
  const int64_t dtypeBytes = isa::dtypeBytes(dtype);
  const isa::Dtype accType = isMax ? dtype : isa::Dtype::Fp32;
  const int64_t accBytes = isa::dtypeBytes(accType);
  const int32_t partitions =
      rowPartitions(builder.geometry(), config.outputFormat, config.planes());
  const int64_t budget = builder.sbufBytesFree() / schedule.buffers;
  const std::vector<RowTile> rows = rowTiles(config.planes(), partitions);
  // The chunks of `chains` accumulators per buffer set.
  const auto plan = [&](size_t chains) {
    const ChunkBytes bytes = [=](const ChunkExtents& e) {
      const int64_t o = e.outputs[0] * e.outputs[1] * e.outputs[2];
      const int64_t i = e.inputs[0] * e.inputs[1] * e.inputs[2];
      return bufferBytes(i, dtypeBytes) + static_cast<int64_t>(chains) * bufferBytes(o, accBytes) +
             (isMax ? 0 : bufferBytes(o, dtypeBytes));
    };
    return planChunks(builder.kernelName(), config, ChunkBy::Output, bytes, budget,
                      schedule.chunksPerTile > 0
                          ? schedule.chunksPerTile
                          : pipelineChunks(static_cast<int64_t>(rows.size())));
  };
  const auto largestOutputBox = [](const std::vector<PoolChunk>& planned) {
    int64_t largest = 1;
    for (const PoolChunk& c : planned) largest = std::max(largest, boxElements(c.outputs));
    return largest;
  };
  std::vector<Engine> accEngines = schedule.accEngines;
  std::vector<PoolChunk> chunks = plan(accEngines.empty() ? 2 : accEngines.size());
  if (accEngines.empty()) {
    accEngines = forwardAccEngines(config.kernel[0] * config.kernel[1] * config.kernel[2],
                                   largestOutputBox(chunks));
    if (accEngines.size() != 2) chunks = plan(accEngines.size());
  }
  const size_t numAcc = accEngines.size();

  const int64_t maxOut = largestOutputBox(chunks);
  int64_t maxIn = 1;
  for (const PoolChunk& c : chunks) maxIn = std::max(maxIn, boxElements(c.inputs));
  struct Buffers {
    Tile in, res;
    std::vector<Tile> acc;
  };
  std::vector<Buffers> sets(static_cast<size_t>(schedule.buffers));
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string tag = fmt::format("{}", s);
    sets[s].in = builder.sbuf({partitions, maxIn}, dtype, fmt::format("in{}", tag));
    for (size_t a = 0; a < numAcc; ++a)
      sets[s].acc.push_back(
          builder.sbuf({partitions, maxOut}, accType, fmt::format("acc{}_{}", tag, a)));
    if (!isMax) sets[s].res = builder.sbuf({partitions, maxOut}, dtype, fmt::format("res{}", tag));
  }

  const float init = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const PlaneTensor source(input, config.dataFormat, config.channels,
                           inputHalo(config, init, init));
  const PlaneTensor target(out, config.outputFormat, config.channels, outputHalo(config));
  QueueCycle loadQueues = QueueCycle::span(0, schedule.loadQueues);
  QueueCycle storeQueues = QueueCycle::span(schedule.firstStoreQueue, schedule.storeQueues);
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  const float scale =
      1.0f / static_cast<float>(config.kernel[0] * config.kernel[1] * config.kernel[2]);
  const int64_t numChunks = static_cast<int64_t>(chunks.size());

  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks, static_cast<int>(sets.size()),
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        source.load(builder, tile, chunk.inputs, boxTile(sets[set].in, tile.count, chunk.inputs),
                    loadQueues.taker());
      },
      [&](int64_t item, int set) {
        builder.setNote("compute");
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        const Box& outBox = chunk.outputs;
        const Box& inBox = chunk.inputs;
        const Tile in = boxTile(sets[set].in, tile.count, inBox);
        const AluOp op = isMax ? AluOp::Max : AluOp::Add;
        std::vector<Tile> acc;
        for (const Tile& a : sets[set].acc) acc.push_back(boxTile(a, tile.count, outBox));
        std::vector<bool> started(numAcc, false);
        size_t next = 0;
        for (int64_t kd = 0; kd < axes[0].k; ++kd) {
          for (int64_t kh = 0; kh < axes[1].k; ++kh) {
            for (int64_t kw = 0; kw < axes[2].k; ++kw) {
              const Spatial t{kd, kh, kw};
              Box r;
              for (int a = 0; a < 3; ++a) r[a] = axes[a].tapOutputs(t[a], inBox[a], outBox[a]);
              if (boxEmpty(r)) continue;
              const size_t which = next++ % numAcc;
              const Engine engine = accEngines[which];
              Tile to = acc[which];
              Tile from = in;
              for (int a = 0; a < 3; ++a) {
                to = to.slice(a, r[a].lo - outBox[a].lo, r[a].hi - outBox[a].lo);
                const int64_t first = axes[a].inputOf(r[a].lo, t[a]) - inBox[a].lo;
                const int64_t last = axes[a].inputOf(r[a].hi - 1, t[a]) - inBox[a].lo;
                from = from.slice(a, first, last + 1, axes[a].s);
              }
              to = compactView(to);
              from = compactView(from);
              if (!started[which] && r == outBox) {
                builder.tensorCopy(to, from, engine);
              } else {
                if (!started[which]) builder.memset(compactView(acc[which]), init, Engine::GpSimd);
                builder.tensorTensor(to, to, from, op, engine);
              }
              started[which] = true;
            }
          }
        }
        const Tile total = compactView(acc[0]);
        for (size_t a = 1; a < numAcc; ++a) {
          if (started[a]) builder.tensorTensor(total, total, compactView(acc[a]), op);
        }
        const Tile accOut = acc[0];
        Tile result = accOut;
        if (!isMax) {
          result = boxTile(sets[set].res, tile.count, outBox);
          builder.activation(compactView(result), total, isa::ActFn::Copy, scale);
        }
        target.store(builder, tile, outBox, result, storeQueues.taker());
      });
}

}  // namespace

void buildAvgPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out, const PoolSchedule& schedule) {
  buildForward(builder, config, input, out, false, schedule);
}

void buildMaxPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out, const PoolSchedule& schedule) {
  buildForward(builder, config, input, out, true, schedule);
}

}  // namespace neuronsim::kernels
