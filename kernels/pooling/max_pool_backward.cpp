// max_pooling_3d_backward: contribution masks swept over the window taps in row-major order,
// the output box split in two lanes whose mask chains run on GpSimd and VectorE side by side.

#include <algorithm>

#include "isa/error.h"
#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::AluOp;
using isa::Engine;

/// eq and new buffers per set, so a lane can compare the next tap while the previous tap's
/// mask is still read; fewer when SBUF is short.
constexpr size_t kRing = 4;

/// One window tap (kd, kh, kw) restricted to the outputs of a chunk it reaches.
struct TapBox {
  Spatial tap{};
  Box reach;  ///< outputs whose tap lands inside the chunk's loaded inputs (not padding)
  Box owned;  ///< outputs whose tap lands inside the chunk's owned inputs
};

std::vector<TapBox> chunkTaps(const std::array<PoolAxis, 3>& axes, const PoolChunk& chunk) {
  std::vector<TapBox> taps;
  for (int64_t kd = 0; kd < axes[0].k; ++kd) {
    for (int64_t kh = 0; kh < axes[1].k; ++kh) {
      for (int64_t kw = 0; kw < axes[2].k; ++kw) {
        TapBox tb;
        tb.tap = {kd, kh, kw};
        for (int a = 0; a < 3; ++a) {
          tb.reach[a] = axes[a].tapOutputs(tb.tap[a], chunk.inputs[a], chunk.outputs[a]);
          tb.owned[a] = axes[a].tapOutputs(tb.tap[a], chunk.owned[a], chunk.outputs[a]);
        }
        if (!boxEmpty(tb.reach)) taps.push_back(tb);
      }
    }
  }
  return taps;
}

/// Taps the equality sweep visits: up to the last one that owns an output (later taps hand
/// nothing to this chunk's inputs).
size_t sweptTaps(const std::vector<TapBox>& taps) {
  size_t n = taps.size();
  while (n > 0 && boxEmpty(taps[n - 1].owned)) --n;
  return n;
}

/// `tile` (whose axes cover `base`) restricted to the outputs `r`.
Tile outputView(const Tile& tile, const Box& base, const Box& r) {
  Tile view = tile;
  for (int a = 0; a < 3; ++a) view = view.slice(a, r[a].lo - base[a].lo, r[a].hi - base[a].lo);
  return compactView(view);
}

/// `tile` (whose axes cover inputs `base`) at the inputs tap `t` of outputs `r` reads.
Tile inputView(const std::array<PoolAxis, 3>& axes, const Tile& tile, const Box& base,
               const Spatial& t, const Box& r) {
  Tile view = tile;
  for (int a = 0; a < 3; ++a) {
    const int64_t first = axes[a].inputOf(r[a].lo, t[a]) - base[a].lo;
    const int64_t last = axes[a].inputOf(r[a].hi - 1, t[a]) - base[a].lo;
    view = view.slice(a, first, last + 1, axes[a].s);
  }
  return compactView(view);
}

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (int x = 0; x < 3; ++x) r[x] = {std::max(a[x].lo, b[x].lo), std::min(a[x].hi, b[x].hi)};
  return r;
}

/// Two halves of `box` along its outermost axis longer than 1 (or the box itself): two
/// independent mask chains for two engines.
std::vector<Box> splitInTwo(const Box& box) {
  for (int a = 0; a < 3; ++a) {
    if (box[a].size() < 2) continue;
    const int64_t mid = box[a].lo + box[a].size() / 2;
    Box first = box, second = box;
    first[a].hi = mid;
    second[a].lo = mid;
    return {first, second};
  }
  return {box};
}

/// Tiles the NaN sweep works in, all free once the equality sweep is done.
struct NanScratch {
  Tile pending;                ///< output box: gradient of NaN windows not handed out yet
  std::array<Tile, 2> shares;  ///< output box, alternating per tap
};

/// Windows whose maximum is NaN get nothing from the equality sweep (NaN != NaN); PyTorch
/// gives their gradient to the window's last NaN (its argmax takes every NaN it meets). This
/// sweep turns the loaded input into its NaN mask (in place), starts `pending` from what the
/// equality sweep left in `ug` where output_tensor is NaN (zero elsewhere), and walks the taps
/// backwards: share = mask * pending, pending -= share, grad_input_view += share, so the first
/// NaN met takes the gradient. Lanes as in the equality sweep.
void routeNanWindows(KernelBuilder& builder, const std::array<PoolAxis, 3>& axes,
                     const PoolChunk& chunk, const std::vector<TapBox>& taps,
                     const std::vector<Box>& lanes, const std::array<Engine, 2>& laneEngines,
                     const Tile& in, const Tile& ot, const Tile& ug, const Tile& gin,
                     const NanScratch& scratch) {
  const Box& out = chunk.outputs;
  builder.tensorTensor(scratch.shares[0], ot, ot, AluOp::NotEqual, Engine::Vector);
  builder.memset(scratch.pending, 0.0f, Engine::GpSimd);
  builder.copyPredicated(scratch.pending, scratch.shares[0], ug, Engine::Vector);
  builder.tensorTensor(in, in, in, AluOp::NotEqual, Engine::GpSimd);
  size_t first = 0;
  while (first < taps.size() && boxEmpty(taps[first].owned)) ++first;
  for (size_t k = taps.size(); k-- > first;) {
    const TapBox& tb = taps[k];
    const Tile& share = scratch.shares[k % 2];
    for (size_t lane = 0; lane < lanes.size(); ++lane) {
      const Box r = intersect(tb.reach, lanes[lane]);
      if (boxEmpty(r)) continue;
      const Tile p = outputView(scratch.pending, out, r);
      const Tile s = outputView(share, out, r);
      builder.tensorTensor(s, inputView(axes, in, chunk.inputs, tb.tap, r), p, AluOp::Multiply,
                           laneEngines[lane]);
      if (k > first) builder.tensorTensor(p, p, s, AluOp::Subtract, laneEngines[lane]);
    }
    if (boxEmpty(tb.owned)) continue;
    const Tile ginView = inputView(axes, gin, chunk.owned, tb.tap, tb.owned);
    builder.tensorTensor(ginView, ginView, outputView(share, out, tb.owned), AluOp::Add,
                         k % 2 == 0 ? Engine::GpSimd : Engine::Vector);
  }
}

}  // namespace

void buildMaxPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& input,
                            const HbmView& outputTensor, const HbmView& gradInput) {
  const isa::Dtype dtype = gradOutput.dtype();
  const int64_t dtypeBytes = isa::dtypeBytes(dtype);
  const int32_t partitions =
      static_cast<int32_t>(std::min<int64_t>(builder.geometry().partitions, config.planes()));
  size_t ring = kRing;
  const ChunkBytes bytes = [dtypeBytes, &ring](const ChunkExtents& e) {
    const int64_t o = e.outputs[0] * e.outputs[1] * e.outputs[2];
    const int64_t i = e.inputs[0] * e.inputs[1] * e.inputs[2];
    const int64_t g = e.owned[0] * e.owned[1] * e.owned[2];
    return bufferBytes(i, dtypeBytes) + 2 * bufferBytes(o, dtypeBytes) +
           2 * static_cast<int64_t>(ring) * bufferBytes(o, 4) + bufferBytes(g, 4);
  };
  const int64_t budget = builder.sbufBytesFree() / 2;
  const std::vector<RowTile> rows = rowTiles(config.planes(), partitions);
  std::vector<PoolChunk> chunks;
  for (;; ring /= 2) {
    try {
      chunks = planChunks(builder.kernelName(), config, ChunkBy::Input, bytes, budget, 1);
      break;
    } catch (const Error&) {
      if (ring == 1) throw;
    }
  }

  int64_t maxOut = 1, maxIn = 1, maxOwned = 1;
  for (const PoolChunk& c : chunks) {
    maxOut = std::max(maxOut, boxElements(c.outputs));
    maxIn = std::max(maxIn, boxElements(c.inputs));
    maxOwned = std::max(maxOwned, boxElements(c.owned));
  }
  struct Buffers {
    Tile in, ot, go, gin;
    std::array<Tile, kRing> eq, nw;
  };
  std::array<Buffers, 2> sets;
  for (int s = 0; s < 2; ++s) {
    const std::string tag = std::to_string(s);
    sets[s].in = builder.sbuf({partitions, maxIn}, dtype, "in" + tag);
    sets[s].ot = builder.sbuf({partitions, maxOut}, dtype, "ot" + tag);
    sets[s].go = builder.sbuf({partitions, maxOut}, dtype, "go" + tag);
    for (size_t r = 0; r < ring; ++r) {
      sets[s].eq[r] = builder.sbuf({partitions, maxOut}, isa::Dtype::Fp32,
                                   "eq" + tag + "_" + std::to_string(r));
      sets[s].nw[r] = builder.sbuf({partitions, maxOut}, isa::Dtype::Fp32,
                                   "new" + tag + "_" + std::to_string(r));
    }
    sets[s].gin = builder.sbuf({partitions, maxOwned}, isa::Dtype::Fp32, "gin" + tag);
  }

  const PlaneTensor gradOut(gradOutput, config.outputFormat, config.channels);
  const PlaneTensor maxima(outputTensor, config.outputFormat, config.channels);
  const PlaneTensor forwardIn(input, config.dataFormat, config.channels);
  const PlaneTensor target(gradInput, config.dataFormat, config.channels);
  QueueCycle loadQueues({0, 1, 2, 3, 4, 5});
  QueueCycle storeQueues({8, 9, 10, 11});
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  const int64_t numChunks = static_cast<int64_t>(chunks.size());
  // Windows that never overlap (k <= s on every axis) give each input to at most one tap:
  // grad_input is then written by ScalarE copies, zeroed only where no tap lands.
  const bool disjoint = config.kernel[0] <= config.stride[0] &&
                        config.kernel[1] <= config.stride[1] &&
                        config.kernel[2] <= config.stride[2];

  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks,
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        if (boxEmpty(chunk.outputs)) return;
        const RowTile tile = rows[item / numChunks];
        const Buffers& buf = sets[set];
        forwardIn.load(builder, tile, chunk.inputs, boxTile(buf.in, tile.count, chunk.inputs),
                       loadQueues.taker());
        maxima.load(builder, tile, chunk.outputs, boxTile(buf.ot, tile.count, chunk.outputs),
                    loadQueues.taker());
        gradOut.load(builder, tile, chunk.outputs, boxTile(buf.go, tile.count, chunk.outputs),
                     loadQueues.taker());
      },
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        const Buffers& buf = sets[set];
        const Tile gin = boxTile(buf.gin, tile.count, chunk.owned);
        const std::vector<TapBox> allTaps =
            boxEmpty(chunk.outputs) ? std::vector<TapBox>{} : chunkTaps(axes, chunk);
        const std::vector<TapBox> taps(allTaps.begin(), allTaps.begin() + sweptTaps(allTaps));
        int64_t covered = 0;
        for (const TapBox& tb : taps) covered += boxEmpty(tb.owned) ? 0 : boxElements(tb.owned);
        if (!disjoint || covered < boxElements(chunk.owned))
          builder.memset(compactView(gin), 0.0f, Engine::GpSimd);
        if (!taps.empty()) {
          const Box& out = chunk.outputs;
          const Tile in = boxTile(buf.in, tile.count, chunk.inputs);
          const Tile ot = boxTile(buf.ot, tile.count, out);
          const Tile ug = boxTile(buf.go, tile.count, out);
          const std::vector<Box> lanes = splitInTwo(out);
          const std::array<Engine, 2> laneEngines =
              lanes.size() == 2 ? std::array<Engine, 2>{Engine::GpSimd, Engine::Vector}
                                : std::array<Engine, 2>{Engine::Vector, Engine::Vector};
          auto compare = [&](size_t i, size_t lane) {
            const Box r = intersect(taps[i].reach, lanes[lane]);
            if (boxEmpty(r)) return;
            const Tile eq = boxTile(buf.eq[i % ring], tile.count, out);
            builder.tensorTensor(outputView(eq, out, r),
                                 inputView(axes, in, chunk.inputs, taps[i].tap, r),
                                 outputView(ot, out, r), AluOp::IsEqual, laneEngines[lane]);
          };
          const size_t ahead = ring >= 2 ? 1 : 0;
          for (size_t lane = 0; lane < lanes.size(); ++lane) {
            for (size_t i = 0; i < ahead && i < taps.size(); ++i) compare(i, lane);
          }
          for (size_t i = 0; i < taps.size(); ++i) {
            const TapBox& tb = taps[i];
            const Tile nw = boxTile(buf.nw[i % ring], tile.count, out);
            const Tile eq = boxTile(buf.eq[i % ring], tile.count, out);
            for (size_t lane = 0; lane < lanes.size(); ++lane) {
              if (i + ahead < taps.size()) compare(i + ahead, lane);
              const Box r = intersect(tb.reach, lanes[lane]);
              if (boxEmpty(r)) continue;
              const Tile ugView = outputView(ug, out, r);
              builder.tensorTensor(outputView(nw, out, r), outputView(eq, out, r), ugView,
                                   AluOp::Multiply, laneEngines[lane]);
              if (i + 1 < taps.size()) {
                builder.tensorTensor(ugView, ugView, outputView(nw, out, r), AluOp::Subtract,
                                     laneEngines[lane]);
              }
            }
            if (!boxEmpty(tb.owned)) {
              const Tile ginView = inputView(axes, gin, chunk.owned, tb.tap, tb.owned);
              if (disjoint) {
                builder.activation(ginView, outputView(nw, out, tb.owned), isa::ActFn::Copy);
              } else {
                builder.tensorTensor(ginView, ginView, outputView(nw, out, tb.owned), AluOp::Add,
                                     i % 2 == 0 ? Engine::GpSimd : Engine::Vector);
              }
            }
          }
          routeNanWindows(builder, axes, chunk, allTaps, lanes, laneEngines, in, ot, ug, gin,
                          NanScratch{boxTile(buf.eq[0], tile.count, out),
                                     {boxTile(buf.nw[0], tile.count, out),
                                      boxTile(buf.nw[ring > 1 ? 1 : 0], tile.count, out)}});
        }
        target.store(builder, tile, chunk.owned, gin, storeQueues.taker());
      });
}

}  // namespace neuronsim::kernels
