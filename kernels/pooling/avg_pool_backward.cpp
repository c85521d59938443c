// avg_pooling_3d_backward: the output gradient spread separably along W, then H, then D.

#include <fmt/format.h>

#include <algorithm>

#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::AluOp;
using isa::Engine;

/// ScalarE copies cost about 1.5x VectorE's per element (reference 4.4).
constexpr double kScalarCostRatio = 1.5;

/// Estimated busy elements per engine, to balance overwrite copies.
struct EngineLoad {
  double vector = 0.0;
  double scalar = 0.0;
};

/// Emits the spread of one axis: dst[.., o*s + t - p, ..] (+)= scale * src[.., o, ..] for every
/// tap t, where src's `axis` covers outputs `outs` and dst's covers inputs `ins`. Taps t < s
/// hit distinct residues and overwrite; the positions they miss are zeroed; taps t >= s add.
class AxisSpread {
 public:
  AxisSpread(KernelBuilder& builder, EngineLoad& load, const PoolAxis& ax, int axis, float scale)
      : builder_(builder), load_(load), ax_(ax), axis_(axis), scale_(scale) {}

  void run(const Tile& src, Range outs, const Tile& dst, Range ins) {
    const int64_t inner = dst.freeSize() / dst.size(axis_);
    for (int64_t t = ax_.s; t < ax_.k; ++t) {
      load_.vector += 2.0 * static_cast<double>(ax_.tapOutputs(t, ins, outs).size() * inner);
    }
    for (int64_t q = 0; q < ax_.s; ++q) {
      const Range all{ceilDiv(ins.lo - q + ax_.p, ax_.s),
                      floorDiv(ins.hi - 1 - q + ax_.p, ax_.s) + 1};
      if (all.empty()) continue;
      const Range covered = q < ax_.k ? ax_.tapOutputs(q, ins, outs) : Range{all.lo, all.lo};
      if (!covered.empty()) overwrite(srcView(src, outs, covered), dstView(dst, ins, q, covered));
      zero(dst, ins, q, {all.lo, covered.empty() ? all.hi : covered.lo});
      if (!covered.empty()) zero(dst, ins, q, {covered.hi, all.hi});
    }
    for (int64_t t = ax_.s; t < ax_.k; ++t) {
      const Range r = ax_.tapOutputs(t, ins, outs);
      if (r.empty()) continue;
      const Tile to = dstView(dst, ins, t, r);
      const Tile from = srcView(src, outs, r);
      if (scale_ == 1.0f) {
        builder_.tensorTensor(to, to, from, AluOp::Add, Engine::Vector);
      } else {
        builder_.scalarTensorTensor(to, from, AluOp::Multiply, scale_, AluOp::Add, to,
                                    Engine::Vector);
      }
    }
  }

 private:
  Tile srcView(const Tile& src, Range outs, Range r) const {
    return compactView(src.slice(axis_, r.lo - outs.lo, r.hi - outs.lo));
  }
  Tile dstView(const Tile& dst, Range ins, int64_t t, Range r) const {
    const int64_t first = ax_.inputOf(r.lo, t) - ins.lo;
    const int64_t last = ax_.inputOf(r.hi - 1, t) - ins.lo;
    return compactView(dst.slice(axis_, first, last + 1, ax_.s));
  }
  void zero(const Tile& dst, Range ins, int64_t q, Range r) {
    if (r.empty()) return;
    builder_.memset(dstView(dst, ins, q, r), 0.0f, Engine::GpSimd);
  }
  void overwrite(const Tile& from, const Tile& to) {
    const double n = static_cast<double>(from.freeSize());
    if (load_.scalar + kScalarCostRatio * n < load_.vector + n) {
      load_.scalar += kScalarCostRatio * n;
      builder_.activation(to, from, isa::ActFn::Copy, scale_);
    } else {
      load_.vector += n;
      if (scale_ == 1.0f) {
        builder_.tensorCopy(to, from, Engine::Vector);
      } else {
        builder_.tensorScalar(to, from, AluOp::Multiply, scale_);
      }
    }
  }

  KernelBuilder& builder_;
  EngineLoad& load_;
  PoolAxis ax_;
  int axis_;
  float scale_;
};

}  // namespace

void buildAvgPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& gradInput,
                            const PoolSchedule& schedule) {
  const isa::Dtype dtype = gradOutput.dtype();
  const int64_t dtypeBytes = isa::dtypeBytes(dtype);
  const int32_t partitions = rowPartitions(builder.geometry(), config.dataFormat, config.planes());
  const ChunkBytes bytes = [dtypeBytes](const ChunkExtents& e) {
    const Spatial& o = e.outputs;
    const Spatial& i = e.owned;
    return bufferBytes(o[0] * o[1] * o[2], dtypeBytes) + bufferBytes(o[0] * o[1] * i[2], 4) +
           bufferBytes(o[0] * i[1] * i[2], 4) + bufferBytes(i[0] * i[1] * i[2], 4);
  };
  const int64_t budget = builder.sbufBytesFree() / schedule.buffers;
  const std::string& name = builder.kernelName();
  const std::vector<RowTile> rows = rowTiles(config.planes(), partitions);
  // Windows overlapping along D make every extra D cut re-read and re-spread outputs (k3 s1 p1
  // on the default shape: 95.6 us in 4 chunks, 77.0 us in 1), so auto cuts only disjoint D.
  const int64_t wantChunks = schedule.chunksPerTile > 0 ? schedule.chunksPerTile
                             : config.kernel[0] > config.stride[0]
                                 ? 1
                                 : pipelineChunks(static_cast<int64_t>(rows.size()));
  const std::vector<PoolChunk> chunks =
      planChunks(name, config, ChunkBy::Input, bytes, budget, wantChunks);

  Spatial maxOut{}, maxIn{};
  for (const PoolChunk& c : chunks) {
    for (int a = 0; a < 3; ++a) {
      maxOut[a] = std::max(maxOut[a], c.outputs[a].size());
      maxIn[a] = std::max(maxIn[a], c.owned[a].size());
    }
  }
  struct Buffers {
    Tile go, g1, g2, g3;
  };
  std::vector<Buffers> sets(static_cast<size_t>(schedule.buffers));
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string tag = fmt::format("{}", s);
    sets[s].go = builder.sbuf({partitions, std::max<int64_t>(1, maxOut[0] * maxOut[1] * maxOut[2])},
                              dtype, fmt::format("go{}", tag));
    sets[s].g1 = builder.sbuf({partitions, std::max<int64_t>(1, maxOut[0] * maxOut[1] * maxIn[2])},
                              isa::Dtype::Fp32, fmt::format("g1_{}", tag));
    sets[s].g2 = builder.sbuf({partitions, std::max<int64_t>(1, maxOut[0] * maxIn[1] * maxIn[2])},
                              isa::Dtype::Fp32, fmt::format("g2_{}", tag));
    sets[s].g3 = builder.sbuf({partitions, maxIn[0] * maxIn[1] * maxIn[2]}, isa::Dtype::Fp32,
                              fmt::format("g3_{}", tag));
  }

  const PlaneTensor source(gradOutput, config.outputFormat, config.channels, outputHalo(config));
  const PlaneTensor target(gradInput, config.dataFormat, config.channels, inputHalo(config));
  QueueCycle loadQueues = QueueCycle::span(0, schedule.loadQueues);
  QueueCycle storeQueues = QueueCycle::span(schedule.firstStoreQueue, schedule.storeQueues);
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  const float scale =
      1.0f / static_cast<float>(config.kernel[0] * config.kernel[1] * config.kernel[2]);
  EngineLoad load;
  const int64_t numChunks = static_cast<int64_t>(chunks.size());

  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks, static_cast<int>(sets.size()),
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        if (boxEmpty(chunk.outputs)) return;
        const RowTile tile = rows[item / numChunks];
        source.load(builder, tile, chunk.outputs, boxTile(sets[set].go, tile.count, chunk.outputs),
                    loadQueues.taker());
      },
      [&](int64_t item, int set) {
        builder.setNote("compute");
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        const Box& in = chunk.owned;
        const Box& out = chunk.outputs;
        const Tile g3 = boxTile(sets[set].g3, tile.count, in);
        if (boxEmpty(out)) {
          builder.memset(compactView(g3), 0.0f, Engine::GpSimd);
        } else {
          const Tile go = boxTile(sets[set].go, tile.count, out);
          const Tile g1 = boxTile(sets[set].g1, tile.count, {out[0], out[1], in[2]});
          const Tile g2 = boxTile(sets[set].g2, tile.count, {out[0], in[1], in[2]});
          AxisSpread(builder, load, axes[2], 2, scale).run(go, out[2], g1, in[2]);
          AxisSpread(builder, load, axes[1], 1, 1.0f).run(g1, out[1], g2, in[1]);
          AxisSpread(builder, load, axes[0], 0, 1.0f).run(g2, out[0], g3, in[0]);
        }
        target.store(builder, tile, in, g3, storeQueues.taker());
      });
}

}  // namespace neuronsim::kernels
