// max_pooling_3d_backward: each window's chosen tap found by keyed max sweeps over its taps,
// then the window's gradient copied (predicated, never multiplied) to that tap's input.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "isa/error.h"
#include "kernels/pooling/max_pool_select.h"
#include "kernels/pooling/pooling_build.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

namespace {

using isa::AluOp;
using isa::Engine;

/// Key ring sizes the automatic choice tries, largest first.
constexpr std::array<size_t, 6> kAutoKeyRings{16, 12, 8, 4, 2, 1};

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
    // Disjoint windows' predicates reuse the key ring.
    const int64_t perPick = disjoint ? 0 : bufferBytes(o, keyBytes) + bufferBytes(o, 4);
    // grad_input in the input buffer: one input buffer more than sets (see inputs below).
    const bool reuse = disjoint && e.owned == e.inputs;
    const int64_t in = reuse ? ceilDiv(bufferBytes(i, dtypeBytes) * (schedule.buffers + 1),
                                       static_cast<int64_t>(schedule.buffers))
                             : bufferBytes(i, dtypeBytes);
    return in + bufferBytes(i, keyBytes) + 2 * bufferBytes(o, dtypeBytes) +
           3 * bufferBytes(o, keyBytes) + static_cast<int64_t>(ring) * bufferBytes(o, keyBytes) +
           static_cast<int64_t>(pickRing) * perPick + (reuse ? 0 : bufferBytes(g, 4));
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
  // PSUM beside the two NDHWC store banks, in order of what it saves: a predicated copy with an
  // operand outside SBUF streams at N, not 2N, and so does a VectorE compare (I2): the zero
  // that disjoint windows' copies write (or the picks of overlapping ones), output_tensor for
  // the compares (unless the performance mode already streams them at N), the last NaN's index.
  // Counted in whole banks: a tile larger than a bank starts at a bank boundary.
  const isa::Geometry& geometry = builder.geometry();
  const int64_t bank = geometry.psumBankBytes();
  int64_t freeBanks =
      geometry.psumPartitionBytes / bank - (config.dataFormat == PoolLayout::Ndhwc ? 2 : 0);
  auto claimBanks = [&](int64_t tiles, int64_t bytesEach) {
    const int64_t size = bufferBytes(bytesEach, 1);
    const int64_t banks = size <= bank ? ceilDiv(tiles, bank / size) : tiles * ceilDiv(size, bank);
    if (banks > freeBanks) return false;
    freeBanks -= banks;
    return true;
  };
  const int64_t pickTiles = schedule.buffers * static_cast<int64_t>(pickRing);
  const bool picksInPsum = disjoint ? claimBanks(1, 4) : claimBanks(pickTiles, maxOut * keyBytes);
  const bool otCompareFast = geometry.vectorPerfMode && dtype == isa::Dtype::Bf16;
  const bool otInPsum = !otCompareFast && claimBanks(schedule.buffers, maxOut * dtypeBytes);
  const bool lastInPsum = claimBanks(schedule.buffers, maxOut * keyBytes);
  struct Buffers {
    Tile notNan, ot, go, gin, sel, last, flags, otPsum, lastPsum;
    BufferRing keys, picks, sums;
  };
  std::vector<Buffers> sets(static_cast<size_t>(schedule.buffers));
  const std::vector<int64_t> outShape{partitions, maxOut};
  const int rings = static_cast<int>(ring), picks = static_cast<int>(pickRing);
  Tile zero;  // what disjoint windows' predicated copies write where a tap is not chosen
  // In PSUM it takes a bank of its own (as claimed): ScalarE writes the next item's PSUM tiles
  // while VectorE's copies read it, and the two serialize on a common bank (A2).
  if (disjoint)
    zero = picksInPsum
               ? builder.psum({partitions, bank / 4}, isa::Dtype::Fp32, "zero").slice(0, 0, 1)
               : builder.sbuf({partitions, 1}, isa::Dtype::Fp32, "zero");
  for (size_t s = 0; s < sets.size(); ++s) {
    const std::string tag = fmt::format("{}", s);
    Buffers& b = sets[s];
    b.notNan = builder.sbuf({partitions, maxIn}, keyType, fmt::format("not_nan{}", tag));
    b.ot = builder.sbuf({partitions, maxOut}, dtype, fmt::format("ot{}", tag));
    b.go = builder.sbuf({partitions, maxOut}, dtype, fmt::format("go{}", tag));
    b.sel = builder.sbuf({partitions, maxOut}, keyType, fmt::format("sel{}", tag));
    b.last = builder.sbuf({partitions, maxOut}, keyType, fmt::format("last{}", tag));
    b.flags = builder.sbuf({partitions, maxOut}, keyType, fmt::format("nan_out{}", tag));
    b.keys = BufferRing::sbuf(builder, rings, outShape, keyType, fmt::format("key{}", tag));
    if (!disjoint) {
      b.picks =
          picksInPsum
              ? BufferRing::psum(builder, picks, outShape, keyType, fmt::format("pick{}", tag))
              : BufferRing::sbuf(builder, picks, outShape, keyType, fmt::format("pick{}", tag));
      b.sums =
          BufferRing::sbuf(builder, picks, outShape, isa::Dtype::Fp32, fmt::format("sum{}", tag));
    }
    if (needGin)
      b.gin = builder.sbuf({partitions, maxOwned}, isa::Dtype::Fp32, fmt::format("gin{}", tag));
  }
  // Where grad_input reuses the input buffer, a store holds it until its data left: one input
  // buffer more than sets lets the next loads start while the last store drains.
  const int inputBuffers = schedule.buffers + (needGin ? 0 : 1);
  std::vector<Tile> inputs;
  for (int s = 0; s < inputBuffers; ++s)
    inputs.push_back(builder.sbuf({partitions, maxIn}, dtype, fmt::format("in{}", s)));
  auto inputOf = [&](int64_t item) { return inputs[static_cast<size_t>(item % inputBuffers)]; };
  for (size_t s = 0; s < sets.size() && otInPsum; ++s)
    sets[s].otPsum = builder.psum(outShape, dtype, fmt::format("ot_psum{}", s));
  for (size_t s = 0; s < sets.size() && lastInPsum; ++s)
    sets[s].lastPsum = builder.psum(outShape, keyType, fmt::format("last_psum{}", s));
  if (disjoint) builder.memset(zero, 0.0f, Engine::Vector);

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
  SelectWork work;
  work.bf16 = dtype == isa::Dtype::Bf16;
  work.bf16Keys = keyType == isa::Dtype::Bf16;
  work.disjoint = disjoint;
  work.otInPsum = otInPsum;
  work.operandInPsum = picksInPsum;
  work.lastInPsum = lastInPsum;
  work.fastPredicate = geometry.vectorPerfMode && keyType == isa::Dtype::Bf16;

  // An item's store is triggered from ScalarE once the next item's output_tensor is in PSUM:
  // its wait for the scatter's last copy then holds back none of the next item's compares.
  std::function<void()> pendingStore;
  auto flushStore = [&] {
    if (pendingStore) pendingStore();
    pendingStore = nullptr;
  };
  // The element work of the GpSimd memsets an item's halo loads start with (I2: N, N/2 for a
  // 16-bit zero).
  auto fillWork = [&](const PoolChunk& chunk) {
    std::vector<double> work;
    auto add = [&](const PlaneTensor& t, const Box& box) {
      for (const PlaneTensor::Fill& f : t.haloFills(box)) {
        Box part = box;
        part[f.axis] = {box[f.axis].lo + f.range.lo, box[f.axis].lo + f.range.hi};
        const bool half = f.value == 0.0f && dtype == isa::Dtype::Bf16;
        work.push_back(static_cast<double>(boxElements(part)) / (half ? 2.0 : 1.0));
      }
    };
    add(forwardIn, chunk.inputs);
    add(maxima, chunk.outputs);
    add(gradOut, chunk.outputs);
    return work;
  };
  runPipelined(
      static_cast<int64_t>(rows.size()) * numChunks, static_cast<int>(sets.size()),
      [&](int64_t item, int set) {
        const PoolChunk& chunk = chunks[item % numChunks];
        if (boxEmpty(chunk.outputs)) return;
        const RowTile tile = rows[item / numChunks];
        const Buffers& buf = sets[set];
        forwardIn.load(builder, tile, chunk.inputs,
                       boxTile(inputOf(item), tile.count, chunk.inputs), loadQueues.taker());
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
        const Tile gin = reusesInput(chunk) ? boxTile(inputOf(item), tile.count, chunk.inputs)
                                            : boxTile(buf.gin, tile.count, chunk.owned);
        const std::vector<TapBox> taps =
            boxEmpty(chunk.outputs) ? std::vector<TapBox>{} : chunkTaps(axes, chunk);
        if (taps.empty()) builder.memset(compactView(gin), 0.0f, Engine::GpSimd);
        if (!taps.empty()) {
          const Box& out = chunk.outputs;
          SelectTiles t;
          t.rows = tile.count;
          t.in = boxTile(inputOf(item), tile.count, chunk.inputs);
          t.notNan = boxTile(buf.notNan, tile.count, chunk.inputs);
          t.ot = boxTile(buf.ot, tile.count, out);
          if (otInPsum) t.otPsum = boxTile(buf.otPsum, tile.count, out);
          t.sel = boxTile(buf.sel, tile.count, out);
          t.last = boxTile(buf.last, tile.count, out);
          t.lastFinal = lastInPsum ? boxTile(buf.lastPsum, tile.count, out) : t.last;
          t.flags = boxTile(buf.flags, tile.count, out);
          t.keys = &buf.keys;
          const Tile go = boxTile(buf.go, tile.count, out);
          const std::vector<Lane> lanes = schedule.gpsimdPercent >= 0
                                              ? splitLanes(out, schedule.gpsimdPercent)
                                              : balancedLanes(work, chunk.inputs, chunk.owned, out,
                                                              taps, fillWork(chunk), geometry);
          // 1 where the input is not NaN (NaN >= -inf is false).
          builder.tensorScalar(compactView(t.notNan), compactView(t.in), AluOp::IsGe,
                               -std::numeric_limits<float>::infinity(), AluOp::Bypass, 0.0f,
                               Engine::GpSimd);
          if (otInPsum)
            builder.tensorCopy(compactView(*t.otPsum), compactView(t.ot), Engine::Scalar);
          flushStore();
          std::vector<size_t> owners;
          int64_t covered = 0;
          for (size_t j = 0; j < taps.size(); ++j) {
            if (boxEmpty(taps[j].owned)) continue;
            owners.push_back(j);
            covered += boxElements(taps[j].owned);
          }
          // Disjoint windows whose taps cover the owned inputs: each owning tap j's inputs are
          // no other tap's, so grad_input_view = grad_output (as soon as tap j's compares are
          // done with an input buffer it may share), then 0 where sel != j (predicate sel - j,
          // ScalarE), so a NaN or Inf gradient reaches only the chosen input.
          const bool early = disjoint && covered == boxElements(chunk.owned);
          auto initial = [&](size_t j) {
            const TapBox& tb = taps[j];
            if (boxEmpty(tb.owned)) return;
            builder.tensorCopy(inputView(axes, gin, chunk.owned, tb.tap, tb.owned),
                               outputView(go, out, tb.owned), Engine::Scalar);
          };
          selectTaps(builder, t, axes, chunk.inputs, out, taps, lanes, ring, [&](size_t j) {
            if (early) initial(j);
          });
          // Otherwise grad_input starts at 0 (the not-NaN mask times 0, on ScalarE), after the
          // last compare read the input it may share a buffer with.
          if (!early) {
            Tile ownedMask = t.notNan;
            for (int a = 0; a < 3; ++a) {
              ownedMask = ownedMask.slice(a, chunk.owned[a].lo - chunk.inputs[a].lo,
                                          chunk.owned[a].hi - chunk.inputs[a].lo);
            }
            builder.tensorScalar(compactView(gin), compactView(ownedMask), AluOp::Multiply, 0.0f,
                                 AluOp::Bypass, 0.0f, Engine::Scalar);
          }
          auto slot = [&](const BufferRing& r, size_t n) {
            return outputView(boxTile(r[static_cast<int64_t>(n)], tile.count, out), out,
                              taps[owners[n]].owned);
          };
          if (disjoint) {
            for (size_t n = 0; n < owners.size(); ++n) {
              const TapBox& tb = taps[owners[n]];
              if (!early) initial(owners[n]);
              const Tile to = inputView(axes, gin, chunk.owned, tb.tap, tb.owned);
              const Tile pred = slot(buf.keys, n);
              // The first predicate on VectorE where its performance mode streams it at N/4
              // or N/2 (A2): cheaper than waiting for ScalarE's at N, which the rest overlap.
              const bool fastFirst = n == 0 && work.fastPredicate;
              builder.tensorScalar(pred, outputView(t.sel, out, tb.owned), AluOp::Add,
                                   -static_cast<float>(owners[n]), AluOp::Bypass, 0.0f,
                                   fastFirst ? Engine::Vector : Engine::Scalar);
              builder.copyPredicated(
                  to, pred, zero.partitionSlice(0, tile.count).broadcast(0, to.freeSize()));
            }
          } else {
            // Each owning tap j: pick = (sel == j), then grad_input_view += grad_output where
            // picked; picks run one tap ahead when the pick ring has room.
            const size_t ahead = pickRing > 1 ? 1 : 0;
            for (size_t step = 0; step < owners.size() + ahead; ++step) {
              if (step < owners.size()) {
                builder.tensorScalar(slot(buf.picks, step),
                                     outputView(t.sel, out, taps[owners[step]].owned),
                                     AluOp::IsEqual, static_cast<float>(owners[step]));
              }
              if (step < ahead) continue;
              const size_t n = step - ahead;
              const TapBox& tb = taps[owners[n]];
              const Tile to = inputView(axes, gin, chunk.owned, tb.tap, tb.owned);
              const Tile sum = slot(buf.sums, n);
              builder.tensorTensor(sum, to, outputView(go, out, tb.owned), AluOp::Add,
                                   Engine::GpSimd);
              builder.copyPredicated(to, slot(buf.picks, n), sum);
            }
          }
        }
        flushStore();
        pendingStore = [&target, &builder, &storeQueues, tile, owned = chunk.owned, gin] {
          target.store(builder, tile, owned, gin, storeQueues.taker());
        };
      });
  flushStore();
}

}  // namespace neuronsim::kernels
