// avg_pooling_3d and max_pooling_3d: one strided tensor_tensor per window tap over each output box.

#include <algorithm>
#include <limits>

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
                  const HbmView& out, bool isMax) {
  const isa::Dtype dtype = input.dtype();
  const int64_t dtypeBytes = isa::dtypeBytes(dtype);
  const isa::Dtype accType = isMax ? dtype : isa::Dtype::Fp32;
  const int64_t accBytes = isa::dtypeBytes(accType);
  const int32_t partitions = static_cast<int32_t>(std::min<int64_t>(builder.geometry().partitions, config.planes()));
  const ChunkBytes bytes = [=](const ChunkExtents& e) {
    const int64_t o = e.outputs[0] * e.outputs[1] * e.outputs[2];
    const int64_t i = e.inputs[0] * e.inputs[1] * e.inputs[2];
    return bufferBytes(i, dtypeBytes) + bufferBytes(o, accBytes) + (isMax ? 0 : bufferBytes(o, dtypeBytes));
  };
  const int64_t budget = builder.sbufBytesFree() / 2;
  const std::vector<RowTile> rows = rowTiles(config.planes(), partitions);
  const std::vector<PoolChunk> chunks =
      planChunks(builder.kernelName(), config, ChunkBy::Output, bytes, budget, pipelineChunks(static_cast<int64_t>(rows.size())));

  int64_t maxOut = 1, maxIn = 1;
  for (const PoolChunk& c : chunks) {
    maxOut = std::max(maxOut, boxElements(c.outputs));
    maxIn = std::max(maxIn, boxElements(c.inputs));
  }
  struct Buffers {
    Tile in, acc, res;
  };
  std::array<Buffers, 2> sets;
  for (int s = 0; s < 2; ++s) {
    const std::string tag = std::to_string(s);
    sets[s].in = builder.sbuf({partitions, maxIn}, dtype, "in" + tag);
    sets[s].acc = builder.sbuf({partitions, maxOut}, accType, "acc" + tag);
    if (!isMax) sets[s].res = builder.sbuf({partitions, maxOut}, dtype, "res" + tag);
  }

  const PlaneTensor source(input, config.dataFormat, config.channels);
  const PlaneTensor target(out, config.outputFormat, config.channels);
  QueueCycle loadQueues({0, 1, 2, 3, 4, 5});
  QueueCycle storeQueues({8, 9, 10, 11});
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  const float scale = 1.0f / static_cast<float>(config.kernel[0] * config.kernel[1] * config.kernel[2]);
  const int64_t numChunks = static_cast<int64_t>(chunks.size());

  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks,
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        source.load(builder, tile, chunk.inputs, boxTile(sets[set].in, tile.count, chunk.inputs), loadQueues.taker());
      },
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        const Box& outBox = chunk.outputs;
        const Box& inBox = chunk.inputs;
        const Tile in = boxTile(sets[set].in, tile.count, inBox);
        const Tile acc = boxTile(sets[set].acc, tile.count, outBox);
        builder.memset(compactView(acc), isMax ? -std::numeric_limits<float>::infinity() : 0.0f, Engine::GpSimd);
        for (int64_t kd = 0; kd < axes[0].k; ++kd) {
          for (int64_t kh = 0; kh < axes[1].k; ++kh) {
            for (int64_t kw = 0; kw < axes[2].k; ++kw) {
              const Spatial t{kd, kh, kw};
              Box r;
              for (int a = 0; a < 3; ++a) r[a] = axes[a].tapOutputs(t[a], inBox[a], outBox[a]);
              if (boxEmpty(r)) continue;
              Tile to = acc;
              Tile from = in;
              for (int a = 0; a < 3; ++a) {
                to = to.slice(a, r[a].lo - outBox[a].lo, r[a].hi - outBox[a].lo);
                const int64_t first = axes[a].inputOf(r[a].lo, t[a]) - inBox[a].lo;
                const int64_t last = axes[a].inputOf(r[a].hi - 1, t[a]) - inBox[a].lo;
                from = from.slice(a, first, last + 1, axes[a].s);
              }
              to = compactView(to);
              builder.tensorTensor(to, to, compactView(from), isMax ? AluOp::Max : AluOp::Add);
            }
          }
        }
        Tile result = acc;
        if (!isMax) {
          result = boxTile(sets[set].res, tile.count, outBox);
          builder.activation(compactView(result), compactView(acc), isa::ActFn::Copy, scale);
        }
        target.store(builder, tile, outBox, result, storeQueues.taker());
      });
}

}  // namespace

void buildAvgPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out) {
  buildForward(builder, config, input, out, false);
}

void buildMaxPool3d(KernelBuilder& builder, const PoolingConfig& config, const HbmView& input,
                    const HbmView& out) {
  buildForward(builder, config, input, out, true);
}

}  // namespace neuronsim::kernels
