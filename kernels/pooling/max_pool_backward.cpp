// max_pooling_3d_backward: each window's chosen tap found by keyed max sweeps over its taps,
// then the window's gradient copied (predicated, never multiplied) to that tap's input.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "isa/error.h"
#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::AluOp;
using isa::Engine;

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

/// The output box cut along its outermost axis longer than 1 so that about `gpsimdPercent`
/// of it goes to the first lane (GpSimd) and the rest to the second (VectorE); empty lanes
/// are dropped.
std::vector<std::pair<Box, Engine>> splitLanes(const Box& box, int64_t gpsimdPercent) {
  for (int a = 0; a < 3 && gpsimdPercent > 0 && gpsimdPercent < 100; ++a) {
    if (box[a].size() < 2) continue;
    const int64_t cut =
        std::clamp<int64_t>((box[a].size() * gpsimdPercent + 50) / 100, 0, box[a].size());
    Box first = box, second = box;
    first[a].hi = box[a].lo + cut;
    second[a].lo = box[a].lo + cut;
    std::vector<std::pair<Box, Engine>> lanes;
    if (!boxEmpty(first)) lanes.push_back({first, Engine::GpSimd});
    if (!boxEmpty(second)) lanes.push_back({second, Engine::Vector});
    return lanes;
  }
  return {{box, gpsimdPercent > 50 ? Engine::GpSimd : Engine::Vector}};
}

/// Key ring sizes the automatic choice tries, largest first.
constexpr std::array<size_t, 5> kAutoKeyRings{12, 8, 4, 2, 1};

/// Below this many outputs per partition a work item's sweeps run as one lane: a second lane
/// doubles the instructions, whose fixed costs then outweigh the parallelism (measured on the
/// default shape: 45.3 us with two lanes, 39.3 us with one).
constexpr int64_t kMinLaneSplitOutputs = 512;

/// The GpSimd share (percent of the output box) that finishes VectorE and GpSimd together.
/// Work in engine cycles per output and tap (I2 table: tensor_tensor 2N, tensor_scalar N,
/// copy_predicated 2N, N with an operand in PSUM; VectorE on 16-bit SBUF operands:
/// tensor_tensor N, tensor_scalar N/4, A2): a lane's key sweeps are a compare and two maxes
/// (keys are bf16); VectorE alone does the picks and predicated copies, GpSimd alone the
/// NaN mask (one per input) and, when windows overlap, the sums. GpSimd's lane cost also
/// carries its 150-cycle start per instruction and the handoffs of its short instructions:
/// 9 (not 6) puts the default within a few percent of the best share measured on
/// B2 C64 16x64x64 k2, the default shape and k3 s1 p1 (docs/pooling.md).
int64_t balancedGpSimdPercent(bool bf16, bool disjoint, bool picksInPsum, double inputsPerTapOutput,
                              const isa::Geometry& geometry) {
  const double vectorGhz = geometry.vectorGhz, gpsimdGhz = geometry.gpsimdGhz;
  const double vectorLane = bf16 ? 3.0 : 4.0;
  const double gpsimdLane = 9.0;
  const double vectorFixed = picksInPsum ? 1.25 : 2.25;
  const double gpsimdFixed = inputsPerTapOutput + (disjoint ? 0.0 : 2.0);
  // (vectorFixed + (1 - f) vectorLane) / Gv = (gpsimdFixed + f gpsimdLane) / Gg, for f.
  const double f = (gpsimdGhz * (vectorFixed + vectorLane) - vectorGhz * gpsimdFixed) /
                   (gpsimdGhz * vectorLane + vectorGhz * gpsimdLane);
  return std::clamp<int64_t>(std::lround(100.0 * f), 0, 100);
}

}  // namespace

void buildMaxPool3dBackward(KernelBuilder& builder, const PoolingConfig& config,
                            const HbmView& gradOutput, const HbmView& input,
                            const HbmView& outputTensor, const HbmView& gradInput,
                            const PoolSchedule& schedule) {
  const isa::Dtype dtype = gradOutput.dtype();
  const int64_t dtypeBytes = isa::dtypeBytes(dtype);
  const int32_t partitions = rowPartitions(builder.geometry(), config.dataFormat, config.planes());
  const int64_t windowTaps = config.kernel[0] * config.kernel[1] * config.kernel[2];
  // Keys are small integers (tap numbers up to windowTaps + 1): exact in bf16 up to 256.
  const isa::Dtype keyType = windowTaps + 1 <= 256 ? isa::Dtype::Bf16 : isa::Dtype::Fp32;
  const int64_t keyBytes = isa::dtypeBytes(keyType);
  const bool disjoint = config.kernel[0] <= config.stride[0] &&
                        config.kernel[1] <= config.stride[1] &&
                        config.kernel[2] <= config.stride[2];
  size_t ring = static_cast<size_t>(schedule.keyRing);
  size_t pickRing = std::min<size_t>(ring, 2);
  const ChunkBytes bytes = [&](const ChunkExtents& e) {
    const int64_t o = e.outputs[0] * e.outputs[1] * e.outputs[2];
    const int64_t i = e.inputs[0] * e.inputs[1] * e.inputs[2];
    const int64_t g = e.owned[0] * e.owned[1] * e.owned[2];
    const int64_t perPick = bufferBytes(o, keyBytes) + (disjoint ? 0 : bufferBytes(o, 4));
    return bufferBytes(i, dtypeBytes) + bufferBytes(i, keyBytes) + 2 * bufferBytes(o, dtypeBytes) +
           3 * bufferBytes(o, keyBytes) + static_cast<int64_t>(ring) * bufferBytes(o, keyBytes) +
           static_cast<int64_t>(pickRing) * perPick +
           (disjoint && e.owned == e.inputs ? 0 : bufferBytes(g, 4));
  };
  const int64_t budget = builder.sbufBytesFree() / schedule.buffers;
  const std::vector<RowTile> rows = rowTiles(config.planes(), partitions);
  const int64_t wantChunks = schedule.chunksPerTile > 0
                                 ? schedule.chunksPerTile
                                 : pipelineChunks(static_cast<int64_t>(rows.size()));
  // The automatic ring is the largest candidate whose plan needs no more chunks than any
  // smaller ring's: extra chunks re-read window halos and cost more than the look-ahead gains.
  std::vector<PoolChunk> chunks;
  const std::vector<size_t> candidates =
      schedule.keyRing > 0 ? std::vector<size_t>{ring}
                           : std::vector<size_t>{kAutoKeyRings.begin(), kAutoKeyRings.end()};
  size_t chosen = 0;
  for (size_t candidate : candidates) {
    ring = candidate;
    pickRing = std::min<size_t>(ring, 2);
    try {
      std::vector<PoolChunk> plan =
          planChunks(builder.kernelName(), config, ChunkBy::Input, bytes, budget, wantChunks);
      if (chosen == 0 || plan.size() < chunks.size()) {
        chunks = std::move(plan);
        chosen = candidate;
      }
    } catch (const Error&) {
      if (candidate == candidates.back() && chosen == 0) throw;
    }
  }
  ring = chosen;
  pickRing = std::min<size_t>(ring, 2);

  int64_t maxOut = 1, maxIn = 1, maxOwned = 1;
  // Disjoint windows write each input at most once: grad_input can then reuse the input
  // buffer of a chunk that loads exactly the inputs it owns (once its keys are computed).
  auto reusesInput = [&](const PoolChunk& c) { return disjoint && c.owned == c.inputs; };
  for (const PoolChunk& c : chunks) {
    maxOut = std::max(maxOut, boxElements(c.outputs));
    maxIn = std::max(maxIn, boxElements(c.inputs));
    if (!reusesInput(c)) maxOwned = std::max(maxOwned, boxElements(c.owned));
  }
  const bool needGin = !std::all_of(chunks.begin(), chunks.end(), reusesInput);
  // Picks in PSUM halve the predicated copies' cost (copy_predicated with an operand
  // outside SBUF streams at N, not 2N: I2), when they fit beside the two NDHWC store banks.
  // Counted in whole banks: a tile larger than a bank starts at a bank boundary.
  const int64_t bank = builder.geometry().psumBankBytes();
  const int64_t banksPerPick = ceilDiv(bufferBytes(maxOut, keyBytes), bank);
  const int64_t picksPerBank = banksPerPick == 1 ? bank / bufferBytes(maxOut, keyBytes) : 1;
  const int64_t pickTiles = schedule.buffers * static_cast<int64_t>(pickRing);
  const int64_t pickBanks = banksPerPick * ceilDiv(pickTiles, picksPerBank);
  const bool picksInPsum = pickBanks <= builder.geometry().psumPartitionBytes / bank - 2;
  struct Buffers {
    Tile in, nan, ot, go, gin, best, bestNan, flags;
    BufferRing keys, picks, sums;
  };
  std::vector<Buffers> sets(static_cast<size_t>(schedule.buffers));
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string tag = fmt::format("{}", s);
    Buffers& b = sets[s];
    b.in = builder.sbuf({partitions, maxIn}, dtype, fmt::format("in{}", tag));
    b.nan = builder.sbuf({partitions, maxIn}, keyType, fmt::format("nan{}", tag));
    b.ot = builder.sbuf({partitions, maxOut}, dtype, fmt::format("ot{}", tag));
    b.go = builder.sbuf({partitions, maxOut}, dtype, fmt::format("go{}", tag));
    b.best = builder.sbuf({partitions, maxOut}, keyType, fmt::format("best{}", tag));
    b.bestNan = builder.sbuf({partitions, maxOut}, keyType, fmt::format("best_nan{}", tag));
    b.flags = builder.sbuf({partitions, maxOut}, keyType, fmt::format("nan_out{}", tag));
    const std::vector<int64_t> outShape{partitions, maxOut};
    const int rings = static_cast<int>(ring), picks = static_cast<int>(pickRing);
    b.keys = BufferRing::sbuf(builder, rings, outShape, keyType, fmt::format("key{}", tag));
    b.picks = picksInPsum
                  ? BufferRing::psum(builder, picks, outShape, keyType, fmt::format("pick{}", tag))
                  : BufferRing::sbuf(builder, picks, outShape, keyType, fmt::format("pick{}", tag));
    if (!disjoint)
      b.sums =
          BufferRing::sbuf(builder, picks, outShape, isa::Dtype::Fp32, fmt::format("sum{}", tag));
    if (needGin)
      b.gin = builder.sbuf({partitions, maxOwned}, isa::Dtype::Fp32, fmt::format("gin{}", tag));
  }

  // Halo slabs: windows outside the tensor get grad_output 0, so whatever they pick adds
  // nothing. D padding is loaded as data: NaN before the tensor (equal to nothing, and before
  // every real NaN of its window, so never the last NaN when a real one exists), -inf after it
  // (after every real tap of its window in row-major order, so never the first match when a
  // real one exists); a window that matches only padding drops its gradient, as the reference.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float negInf = -std::numeric_limits<float>::infinity();
  const PlaneTensor gradOut(gradOutput, config.outputFormat, config.channels, outputHalo(config));
  const PlaneTensor maxima(outputTensor, config.outputFormat, config.channels, outputHalo(config));
  const PlaneTensor forwardIn(input, config.dataFormat, config.channels,
                              inputHalo(config, nan, negInf));
  const PlaneTensor target(gradInput, config.dataFormat, config.channels, inputHalo(config));
  QueueCycle loadQueues = QueueCycle::span(0, schedule.loadQueues);
  QueueCycle storeQueues = QueueCycle::span(schedule.firstStoreQueue, schedule.storeQueues);
  const std::array<PoolAxis, 3> axes = poolAxes(config);
  const int64_t numChunks = static_cast<int64_t>(chunks.size());
  const double inputsPerTapOutput =
      static_cast<double>(config.input[0] * config.input[1] * config.input[2]) /
      static_cast<double>(config.output()[0] * config.output()[1] * config.output()[2] *
                          windowTaps);
  const int64_t gpsimdPercent =
      schedule.gpsimdPercent >= 0
          ? schedule.gpsimdPercent
          : balancedGpSimdPercent(dtype == isa::Dtype::Bf16, disjoint, picksInPsum,
                                  inputsPerTapOutput, builder.geometry());

  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks, static_cast<int>(sets.size()),
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
        builder.setNote("compute");
        const PoolChunk& chunk = chunks[item % numChunks];
        const RowTile tile = rows[item / numChunks];
        const Buffers& buf = sets[set];
        const Tile gin = reusesInput(chunk) ? boxTile(buf.in, tile.count, chunk.inputs)
                                            : boxTile(buf.gin, tile.count, chunk.owned);
        const std::vector<TapBox> taps =
            boxEmpty(chunk.outputs) ? std::vector<TapBox>{} : chunkTaps(axes, chunk);
        if (taps.empty()) builder.memset(compactView(gin), 0.0f, Engine::GpSimd);
        if (!taps.empty()) {
          const Box& out = chunk.outputs;
          const float count = static_cast<float>(taps.size());
          const Tile in = boxTile(buf.in, tile.count, chunk.inputs);
          const Tile nan = boxTile(buf.nan, tile.count, chunk.inputs);
          const Tile ot = boxTile(buf.ot, tile.count, out);
          const Tile go = boxTile(buf.go, tile.count, out);
          const Tile best = boxTile(buf.best, tile.count, out);
          const Tile bestNan = boxTile(buf.bestNan, tile.count, out);
          const Tile flags = boxTile(buf.flags, tile.count, out);
          const bool small = schedule.gpsimdPercent < 0 && boxElements(out) < kMinLaneSplitOutputs;
          const auto lanes = splitLanes(out, small ? 0 : gpsimdPercent);
          builder.memset(compactView(best), 0.0f, Engine::GpSimd);
          builder.memset(compactView(bestNan), 0.0f, Engine::GpSimd);
          // 1 where the input is NaN (NaN >= -inf is false).
          builder.tensorScalar(compactView(nan), compactView(in), AluOp::IsGe,
                               -std::numeric_limits<float>::infinity(), AluOp::IsEqual, 0.0f,
                               Engine::GpSimd);
          // Keys: tap j equal to the maximum scores count - j (the first such tap scores
          // highest); tap j holding a NaN scores j + 1 (the last NaN scores highest).
          // One unit per (tap, key kind, lane): compare (equality only), weight on ScalarE,
          // max into the lane's accumulator; emitted skewed (compare of unit u, weight of
          // u - d, max of u - 2d, d from the ring) so no engine waits on the one before it.
          struct Unit {
            size_t tap;
            bool isNan;
            Box r;
            Engine engine;
            Tile key;
          };
          std::vector<Unit> units;
          for (size_t j = 0; j < taps.size(); ++j) {
            for (bool isNan : {false, true}) {
              for (const auto& [lane, engine] : lanes) {
                const Box r = intersect(taps[j].reach, lane);
                if (boxEmpty(r)) continue;
                const Tile key = outputView(
                    boxTile(buf.keys[static_cast<int64_t>(units.size())], tile.count, out), out, r);
                units.push_back({j, isNan, r, engine, key});
              }
            }
          }
          auto compare = [&](const Unit& u) {
            if (u.isNan) return;
            builder.tensorTensor(u.key, inputView(axes, in, chunk.inputs, taps[u.tap].tap, u.r),
                                 outputView(ot, out, u.r), AluOp::IsEqual, u.engine);
          };
          auto weigh = [&](const Unit& u) {
            const float j = static_cast<float>(u.tap);
            if (u.isNan) {
              builder.tensorScalar(u.key, inputView(axes, nan, chunk.inputs, taps[u.tap].tap, u.r),
                                   AluOp::Multiply, j + 1.0f, AluOp::Bypass, 0.0f, Engine::Scalar);
            } else {
              builder.tensorScalar(u.key, u.key, AluOp::Multiply, count - j, AluOp::Bypass, 0.0f,
                                   Engine::Scalar);
            }
          };
          auto accumulate = [&](const Unit& u) {
            const Tile acc = outputView(u.isNan ? bestNan : best, out, u.r);
            builder.tensorTensor(acc, acc, u.key, AluOp::Max, u.engine);
          };
          // A key is live from its compare to its max (2 * skew units later): the ring holds them.
          const size_t skew = (ring - 1) / 2;
          for (size_t step = 0; step < units.size() + 2 * skew; ++step) {
            if (step < units.size()) compare(units[step]);
            if (step >= skew && step - skew < units.size()) weigh(units[step - skew]);
            if (step >= 2 * skew) accumulate(units[step - 2 * skew]);
          }
          // sel = count - best (count: no tap), or bestNan - 1 (-1: none) where output is NaN.
          const Tile sel = compactView(best);
          builder.tensorTensor(compactView(flags), compactView(ot), compactView(ot),
                               AluOp::NotEqual, Engine::GpSimd);
          builder.tensorScalar(sel, sel, AluOp::Multiply, -1.0f, AluOp::Add, count);
          builder.tensorScalar(compactView(bestNan), compactView(bestNan), AluOp::Add, -1.0f);
          builder.copyPredicated(sel, compactView(flags), compactView(bestNan));
          // grad_input starts at 0 (the finite mask times 0, on ScalarE), after the last compare
          // read the input it may share a buffer with.
          Tile ownedMask = nan;
          for (int a = 0; a < 3; ++a) {
            ownedMask = ownedMask.slice(a, chunk.owned[a].lo - chunk.inputs[a].lo,
                                        chunk.owned[a].hi - chunk.inputs[a].lo);
          }
          builder.tensorScalar(compactView(gin), compactView(ownedMask), AluOp::Multiply, 0.0f,
                               AluOp::Bypass, 0.0f, Engine::Scalar);
          // Each owning tap j: pick = (sel == j), then grad_input_view = grad_output where
          // picked (plus what it holds when windows overlap); picks run one tap ahead when
          // the pick ring has room.
          std::vector<size_t> owners;
          for (size_t j = 0; j < taps.size(); ++j) {
            if (!boxEmpty(taps[j].owned)) owners.push_back(j);
          }
          auto pickOf = [&](size_t n) {
            return outputView(boxTile(buf.picks[static_cast<int64_t>(n)], tile.count, out), out,
                              taps[owners[n]].owned);
          };
          const size_t ahead = pickRing > 1 ? 1 : 0;
          for (size_t step = 0; step < owners.size() + ahead; ++step) {
            if (step < owners.size()) {
              builder.tensorScalar(pickOf(step), outputView(best, out, taps[owners[step]].owned),
                                   AluOp::IsEqual, static_cast<float>(owners[step]));
            }
            if (step < ahead) continue;
            const size_t n = step - ahead;
            const TapBox& tb = taps[owners[n]];
            const Tile to = inputView(axes, gin, chunk.owned, tb.tap, tb.owned);
            const Tile grad = outputView(go, out, tb.owned);
            if (disjoint) {
              builder.copyPredicated(to, pickOf(n), grad);
            } else {
              const Tile sum = outputView(
                  boxTile(buf.sums[static_cast<int64_t>(n)], tile.count, out), out, tb.owned);
              builder.tensorTensor(sum, to, grad, AluOp::Add, Engine::GpSimd);
              builder.copyPredicated(to, pickOf(n), sum);
            }
          }
        }
        target.store(builder, tile, chunk.owned, gin, storeQueues.taker());
      });
}

}  // namespace neuronsim::kernels
