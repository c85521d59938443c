// matmul's schedule parameters and how the automatic ones are chosen.
#include "kernels/matmul/matmul_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "kernels/builder/pe_estimate.h"

namespace neuronsim::kernels {

namespace {

using isa::ceilDiv;

std::string choice(const ParamValues& params, const std::string& name) {
  return params.has(name) ? params.getString(name) : "auto";
}

/// Full M tiles at most computed transposed with the tail (moving at most 512 columns).
constexpr int64_t kMaxTransposedTiles = 3;

int64_t outBytes(const MatmulSchedule& s) {
  return s.outBuffers * kMatmulFree * 4;
}

int64_t align64(int64_t b) {
  return (b + 63) / 64 * 64;
}

/// SBUF bytes per partition that staging `rows` transposed result rows takes: two evicted
/// [n, rows] tiles and two [128, 128] row blocks per 128 rows (out_tail_t, out_tail).
int64_t transposedStagingBytes(int64_t rows) {
  return 2 * std::max(kMatmulPart, rows) * 4 + 2 * ceilDiv(rows, kMatmulPart) * kMatmulPart * 4;
}

/// SBUF bytes per partition of a kblocked schedule whose chunks hold `kc` K tiles.
int64_t kblockedSbufBytes(const MatmulSchedule& s, int64_t kc, int64_t m, int64_t n,
                          int64_t bytes) {
  const int64_t lhs = align64(kc * std::min(m, s.blockM * kMatmulPart) * bytes);
  const int64_t rhs = align64(kc * std::min(n, s.blockN * kMatmulFree) * bytes);
  return outBytes(s) + s.loadBuffers * (lhs + rhs);
}

/// The PSUM block (in tiles) that moves the fewest HBM bytes and whose one-K-tile chunks fit
/// SBUF: lhsT is read once per column block, rhs once per row block.
void chooseBlock(MatmulSchedule& s, int64_t mTiles, int64_t nTiles, int64_t m, int64_t n,
                 int64_t bytes, int64_t banks, int64_t capacity, bool mGiven, bool nGiven) {
  const MatmulSchedule given = s;
  double best = -1;
  for (int64_t bm = 1; bm <= mTiles; ++bm)
    for (int64_t bn = 1; bn <= nTiles && bm * bn <= banks; ++bn) {
      if ((mGiven && bm != given.blockM) || (nGiven && bn != given.blockN)) continue;
      MatmulSchedule trial = given;
      trial.blockM = bm;
      trial.blockN = bn;
      if (kblockedSbufBytes(trial, 1, m, n, bytes) > capacity) continue;
      const double traffic = static_cast<double>(m) * static_cast<double>(ceilDiv(nTiles, bn)) +
                             static_cast<double>(n) * static_cast<double>(ceilDiv(mTiles, bm));
      if (best < 0 || traffic < best) {
        best = traffic;
        s.blockM = bm;
        s.blockN = bn;
      }
    }
}

/// TensorE cycles per K tile of mode both when the last `rows` rows of M are computed
/// transposed: every matmul costs its own cycles and, as the next stationary loads in the
/// background, at least that stationary's load.
double bothPeCycles(int64_t m, int64_t n, int64_t nTile, int64_t rows, isa::Dtype dtype,
                    const isa::Geometry& geometry) {
  const bool fp32 = dtype == isa::Dtype::Fp32;
  const auto matmul = [&](int64_t stationary, int64_t moving) {
    return std::max(matmulCycles(geometry, stationary, moving, fp32),
                    stationaryLoadCycles(geometry, stationary, fp32));
  };
  double cycles = 0;
  for (int64_t n0 = 0; n0 < n; n0 += nTile) {
    const int64_t ns = std::min(nTile, n - n0);
    for (int64_t m0 = 0; m0 < m - rows; m0 += kMatmulPart)
      cycles += matmul(std::min(kMatmulPart, m - rows - m0), ns);
    if (rows == 0) continue;
    for (int64_t c0 = 0; c0 < ns; c0 += kMatmulPart)
      cycles += matmul(std::min(kMatmulPart, ns - c0), rows);
  }
  return cycles;
}

/// Mode both's transposed rows for fp32 (auto): the M tail plus the fewest full tiles before it
/// (`tiles` when given) whose matmuls hide each rhs chunk's stationary load (at least 128 /
/// ls_speedup_fp32 moving rows, or the 64-cycle floor), when that costs TensorE fewer cycles
/// than computing all of M direct; only behind direct tiles, whose work hides the transposes'
/// DMA latency. 0: all direct.
int64_t autoTransposedRows(int64_t m, int64_t n, int64_t nTile, int64_t tiles, isa::Dtype dtype,
                           const isa::Geometry& geometry,
                           const std::function<bool(int64_t)>& fits) {
  const double hidingRows = static_cast<double>(kMatmulPart) / geometry.lsSpeedupFp32;
  int64_t rows = m % kMatmulPart + std::max<int64_t>(0, tiles) * kMatmulPart;
  if (tiles < 0)
    while (rows == 0 || static_cast<double>(std::max(geometry.matmulMinCycles, rows)) < hidingRows)
      rows += kMatmulPart;
  if (rows == 0 || rows >= m || rows > kMatmulFree || !fits(rows)) return 0;
  // A tail between the floor and a full tile saves too little for its two extra DMAs
  // (measured: 600x740x900 on trn1, 100 rows, 0.2% slower transposed).
  if (rows > geometry.matmulMinCycles && rows < kMatmulPart) return 0;
  return bothPeCycles(m, n, nTile, rows, dtype, geometry) <
                 bothPeCycles(m, n, nTile, 0, dtype, geometry)
             ? rows
             : 0;
}

/// Mode both's Sync loads between the first tiles' pieces and the K-tail loads (auto): the tails
/// move a few partitions, so one DMA engine carries them, and that engine's slice of the first
/// tiles waits while it does. They start their data a trigger time after each other, as the
/// first tiles did, so the tails go behind enough Sync triggers to cover the first tiles' data
/// (at the DMA engines' or the HBM share's rate, whichever is lower) and one transfer overhead.
int64_t autoKTailDelay(int64_t firstBytes, int64_t firstPieces, const isa::Geometry& geometry) {
  const double bytesPerNs =
      std::min(geometry.dmaBytesPerPeCycle, geometry.hbmBytesPerPeCycle) * geometry.peGhz;
  if (bytesPerNs <= 0 || geometry.dmaTriggerNs <= 0) return 0;
  const double dataNs =
      static_cast<double>(firstBytes) / bytesPerNs + geometry.dmaTransferOverheadNs;
  const auto triggers = static_cast<int64_t>(std::ceil(dataNs / geometry.dmaTriggerNs));
  return std::max<int64_t>(0, triggers - firstPieces);
}

/// Mode both's automatic store_tiles for a column pass of `ns` columns: as many results as
/// TensorE computes in one hwdge DMA trigger time (each K tile's matmul costs `ns` moving
/// columns), so that the pass's stores are triggered no more often than Sync can trigger one;
/// at most half of `outBuffers`, so the next group evicts while one stores.
int64_t autoStoreTiles(int64_t kt, int64_t ns, int64_t outBuffers, isa::Dtype dtype,
                       const isa::Geometry& geometry) {
  const double tileNs = static_cast<double>(kt) *
                        matmulCycles(geometry, kMatmulPart, ns, dtype == isa::Dtype::Fp32) /
                        geometry.peGhz;
  const auto tiles = static_cast<int64_t>(std::ceil(geometry.dmaTriggerNs / tileNs));
  return std::clamp<int64_t>(tiles, 1, std::max<int64_t>(1, outBuffers / 2));
}

/// Mode both's columns per pass: a ragged N (not a multiple of 512) ends in a narrow pass, and
/// 384-column passes (measured on the test shapes) trade a little per-matmul overhead for less
/// data before the first matmul; unless they end in a pass narrower than one 128-column chunk
/// that 512-column passes avoid: such a pass costs every M tile a 64-cycle-floor matmul per K
/// tile and ends the kernel on as many small, trigger-bound stores.
int64_t autoNTile(int64_t n) {
  constexpr int64_t kRaggedTile = 384;
  if (n <= kMatmulFree || n % kMatmulFree == 0) return kMatmulFree;
  const auto lastPass = [n](int64_t tile) { return n % tile == 0 ? tile : n % tile; };
  return lastPass(kRaggedTile) < kMatmulPart && lastPass(kMatmulFree) >= kMatmulPart ? kMatmulFree
                                                                                     : kRaggedTile;
}

}  // namespace

std::vector<ParamSpec> matmulScheduleParams() {
  const auto maxLoads = [](const isa::Geometry& g) -> int64_t {
    return MatmulQueues(g).maxLoads();
  };
  const auto maxStores = [](const isa::Geometry& g) -> int64_t {
    return MatmulQueues(g).maxStores();
  };
  const auto knobSpec = [](std::string name, std::string meaning,
                           std::vector<std::string> candidates) {
    return scheduleParam(std::move(name), ParamType::Int, std::move(meaning),
                         std::move(candidates));
  };
  const auto choiceSpec = [](std::string name, std::string meaning,
                             std::vector<std::string> choices) {
    return scheduleParam(std::move(name), ParamType::Enum, std::move(meaning), {},
                         std::move(choices));
  };
  return {
      choiceSpec("mode",
                 "both (lhsT and rhs kept whole in SBUF), resident (rhs column groups kept in "
                 "SBUF, lhsT streamed) or kblocked (an output block kept in PSUM while K streams "
                 "through); auto: the first that fits SBUF",
                 {"auto", "both", "resident", "kblocked"}),
      knobSpec("block_m",
               "kblocked: 128-row M tiles per PSUM block, 1..PSUM banks (auto: the block moving "
               "the fewest HBM bytes)",
               {"1", "2", "4"})
          .withinPsumBanks(),
      knobSpec("block_n", "kblocked: 512-column N tiles per PSUM block (auto: as block_m)",
               {"1", "2", "4"})
          .withinPsumBanks(),
      knobSpec("n_tile",
               "mode both: rhs columns per PSUM tile, 64..512 (auto: 384 when N > 512 is not a "
               "multiple of 512 and the last 384-column pass has at least 128 columns or the "
               "last 512-column pass fewer, else 512)",
               {"256", "384", "512"})
          .within(64, kMatmulFree),
      knobSpec("k_chunk",
               "kblocked: 128-row K tiles per operand load (auto: 8, fewer when SBUF is short)",
               {"2", "4", "8", "16"})
          .within(1, int64_t{1} << 20),
      knobSpec("load_buffers",
               "kblocked: operand chunk buffers, 1-8 (auto: 3); resident: lhsT buffers (auto: 4 "
               "when they fit, else 2)",
               {"2", "3", "4"})
          .within(1, 8),
      knobSpec("load_chunks",
               "DMAs per multi-K-tile load (mode both: of the first tiles), 1-64 (auto: resident "
               "4, both 1 for bf16, 2 for fp32)",
               {"1", "2", "4", "8"})
          .within(1, 64),
      knobSpec("psum_buffers",
               "PSUM banks the accumulators rotate through (auto: resident 4, kblocked all)",
               {"2", "4", "8"})
          .withinPsumBanks(),
      knobSpec("out_buffers",
               "SBUF staging tiles for evicted results, 1-16 (auto: 4; 8 in mode both when it "
               "fits)",
               {"2", "4", "8"})
          .within(1, 16),
      knobSpec("load_queues",
               "DMA queues the Sync-triggered loads spread over, q0..q(n-1), 1 to 3/8 of the "
               "machine's queues (6 of 16; auto: 1, so loads land in order)",
               {"1", "2", "4"})
          .within(1, maxLoads, "3/8 of the machine's DMA queues"),
      knobSpec("store_queues",
               "DMA queues the GpSimd-triggered stores spread over, the last n queues, 1 to a "
               "quarter of the machine's queues (4 of 16; auto: 2)",
               {"1", "2", "4"})
          .within(1, maxStores, "a quarter of the machine's DMA queues"),
      choiceSpec("store_engines",
                 "engines triggering the stores: gpsimd, or alternate (GpSimd and Sync on its own "
                 "queues, q6-q7 of 16); auto: alternate in mode both (Sync is idle once its loads "
                 "are out), else "
                 "gpsimd",
                 {"auto", "gpsimd", "alternate"}),
      knobSpec("store_tiles",
               "results of up to n consecutive 128-row M tiles of one column pass stored by one "
               "DMA, 1-8 (auto: mode both, per pass, the tiles TensorE computes in one hwdge "
               "trigger time, 600 ns, at most half the out ring, so a narrow pass's stores do "
               "not queue behind their triggers; else 1)",
               {"1", "2", "4"})
          .within(1, 8),
      choiceSpec("rhs_engine",
                 "engine triggering the rhs loads: sync (with lhsT) or scalar (q10, q11: two "
                 "engines share the 600 ns hwdge trigger cost); auto: sync",
                 {"auto", "sync", "scalar"}),
      choiceSpec("side_engine",
                 "mode both: engine triggering the K tails (fewer than 128 rows) on their side "
                 "queues (q8, q9 of 16): sync, or gpsimd (software descriptors for a few rows take "
                 "less than a 600 ns hwdge trigger, so Sync's next loads start sooner, but the "
                 "tails then share DMA engine 0 with the first tiles' loads); auto: sync",
                 {"auto", "sync", "gpsimd"}),
      knobSpec("k_tail_delay",
               "mode both, K tails triggered by Sync: Sync loads triggered after the first "
               "tiles and before the two K-tail loads, 0-64 (auto: when the first tiles load in "
               "one piece each and a tail's rows sit on one DMA engine, the fewest loads whose "
               "triggers outlast the first tiles' data, so the tails do not hold that engine "
               "while the first matmul waits for its slice; else 0)",
               {"0", "1", "2", "3"})
          .within(0, 64),
      knobSpec("ramp_chunks",
               "kblocked: the first block's chunks grow 1, 2, 4, ... K tiles so its first "
               "matmuls start early, 0 or 1 (auto: 1)",
               {"0", "1"})
          .within(0, 1),
      choiceSpec("evict",
                 "engines copying PSUM results to SBUF; auto: in mode both ScalarE alone when its "
                 "clock beats VectorE's (one fp32 element per cycle each) and it copies a tile "
                 "in no longer than TensorE computes one, so the last tiles' copies are shorter; "
                 "else alternate VectorE, ScalarE",
                 {"auto", "alternate", "vector", "scalar"}),
      choiceSpec("m_tail",
                 "mode both: the last M tile of fewer than 128 rows (with m_tail_tiles full tiles "
                 "before it) computed direct, or transposed (out^T = rhs^T lhsT: rhs 128-column "
                 "chunks stationary, the lhsT rows moving, so a thin tail's pass costs the "
                 "64-cycle floor instead of N columns); auto: at fp32 whichever costs TensorE "
                 "the fewest cycles (stationary loads included) behind at least one direct tile, "
                 "at bf16 transposed when M > 128 and the tail has at most 16 rows against K >= "
                 "1024",
                 {"auto", "direct", "transposed"}),
      knobSpec("m_tail_tiles",
               "mode both, transposed tail: full 128-row M tiles computed transposed with it, "
               "0-3, so that at fp32 each rhs chunk's stationary load hides behind at least 128 "
               "moving rows (auto: with m_tail auto at fp32 the fewest tiles that do, when that "
               "costs TensorE fewer cycles than all direct; else 0)",
               {"0", "1", "2"})
          .within(0, kMaxTransposedTiles),
  };
}

MatmulQueues::MatmulQueues(const isa::Geometry& geometry) : unit(geometry.dmaQueues / 8) {
  if (unit < 1)
    throw Error(fmt::format(
        "matmul: needs at least 8 DMA queues (the machine has {}): loads, stores, small transfers "
        "and ScalarE's rhs loads each take their own",
        geometry.dmaQueues));
}

MatmulSchedule resolveMatmulSchedule(const ParamValues& params, int64_t k, int64_t m, int64_t n,
                                     isa::Dtype dtype, const isa::Geometry& geometry) {
  MatmulSchedule s;
  const int64_t bytes = isa::dtypeBytes(dtype);
  const int64_t kt = ceilDiv(k, kMatmulPart);
  const int64_t mTiles = ceilDiv(m, kMatmulPart), nTiles = ceilDiv(n, kMatmulFree);
  const int64_t capacity = geometry.sbufPartitionBytes;
  const int64_t banks = geometry.psumBanks;

  const std::string evict = choice(params, "evict");
  s.evict = evict == "vector"   ? EvictEngines::Vector
            : evict == "scalar" ? EvictEngines::Scalar
                                : EvictEngines::Alternate;
  s.outBuffers = params.intOr("out_buffers", 4);
  s.loadQueues = params.intOr("load_queues", 1);
  s.storeQueues = params.intOr("store_queues", 2);
  s.storeTiles = params.intOr("store_tiles", 1);
  s.scalarRhs = choice(params, "rhs_engine") == "scalar";
  s.rampChunks = params.intOr("ramp_chunks", 1) == 1;
  s.sideEngine =
      choice(params, "side_engine") == "gpsimd" ? isa::Engine::GpSimd : isa::Engine::Sync;

  // Resident: out ring + lhsT buffers + two rhs group buffers of at least one 512-column tile.
  // Four lhsT buffers (three loads ahead) when they fit beside the rhs group, else two.
  const int64_t rhsTileBytes = kt * std::min(n, kMatmulFree) * bytes;
  const auto residentBytes = [&](int64_t lhsBuffers) {
    return outBytes(s) + lhsBuffers * kt * kMatmulPart * bytes + 2 * rhsTileBytes;
  };
  const int64_t lhsBuffers = params.intOr("load_buffers", residentBytes(4) <= capacity ? 4 : 2);
  const int64_t residentFixed = outBytes(s) + lhsBuffers * kt * kMatmulPart * bytes;
  const bool residentFits = capacity - residentFixed >= 2 * rhsTileBytes;
  const int64_t operandBytes =
      align64(kt * mTiles * kMatmulPart * bytes) + align64(kt * nTiles * kMatmulFree * bytes);
  const int64_t bothBytes = outBytes(s) + transposedStagingBytes(kMatmulPart) + operandBytes;
  const bool bothFit = bothBytes <= capacity;
  const std::string mode = choice(params, "mode");
  s.mode = mode == "both"       ? MatmulMode::BothResident
           : mode == "resident" ? MatmulMode::Resident
           : mode == "kblocked" ? MatmulMode::KBlocked
           : bothFit            ? MatmulMode::BothResident
           : residentFits       ? MatmulMode::Resident
                                : MatmulMode::KBlocked;

  const std::string stores = choice(params, "store_engines");
  s.syncStores = stores == "alternate" || (stores == "auto" && s.mode == MatmulMode::BothResident);
  if (s.mode == MatmulMode::BothResident) {
    if (!bothFit)
      throw Error(
          fmt::format("matmul: mode both needs {} bytes per partition for lhsT and rhs "
                      "but SBUF has {}",
                      bothBytes, capacity));
    // fp32 tiles are twice the bytes: two pieces let the first matmuls start on half of them.
    s.loadChunks = params.intOr("load_chunks", dtype == isa::Dtype::Fp32 ? 2 : 1);
    s.nTile = params.intOr("n_tile", autoNTile(n));
    s.psumBuffers = params.intOr("psum_buffers", std::min<int64_t>(4, banks));
    const std::string tail = choice(params, "m_tail");
    const int64_t tailRows = m % kMatmulPart;
    const int64_t tiles = params.intOr("m_tail_tiles", -1);
    const int64_t givenRows = tailRows + std::max<int64_t>(0, tiles) * kMatmulPart;
    if (tail == "transposed" && givenRows > m)
      throw Error(fmt::format("matmul: parameter m_tail_tiles is {} but M = {} has {} full tiles",
                              tiles, m, m / kMatmulPart));
    // More than 128 transposed rows need wider staging.
    const auto fits = [&](int64_t rows) {
      return outBytes(s) + transposedStagingBytes(rows) + operandBytes <= capacity;
    };
    // Transposed results take two more DMAs each (a transpose and a store). At fp32 TensorE
    // bounds the run, so the split with the fewest PE cycles wins; at bf16 (memory-bound) only a
    // thin tail against deep K gains (measured on the test shapes: 8 rows with K 1030 gains 1.8
    // points of roofline, 6 rows with K 520 or 60 rows with K 1100 lose 2 to 4), behind direct
    // tiles (M > 128): alone, the transpose's DMA latency is exposed.
    constexpr int64_t kThinBf16TailRows = 16, kDeepKTiles = 8;
    const bool bf16Tail =
        m > kMatmulPart && tailRows > 0 && tailRows <= kThinBf16TailRows && kt >= kDeepKTiles;
    if (tail == "transposed")
      s.transposedRows = givenRows;
    else if (tail == "auto" && dtype == isa::Dtype::Fp32)
      s.transposedRows = autoTransposedRows(m, n, s.nTile, tiles, dtype, geometry, fits);
    else if (tail == "auto" && bf16Tail)
      s.transposedRows = givenRows;
    if (!fits(s.transposedRows))
      throw Error(
          fmt::format("matmul: mode both with {} transposed rows needs more than the {} "
                      "bytes per partition SBUF has; use fewer m_tail_tiles",
                      s.transposedRows, capacity));
    // The K tails go behind later Sync loads when the first matmul waits for the whole first
    // tiles (one piece each) and each tail sits on one DMA engine's partitions: a wider tail
    // moves enough bytes on its engines to delay whichever load it lands beside (measured: 9 to
    // 103 rows lose up to 5%), and with several pieces the first matmuls start on the first.
    const int64_t fullTiles = k / kMatmulPart, kTailRows = k % kMatmulPart;
    const bool onePiece = std::min(s.loadChunks, fullTiles) == 1;
    const bool deferTails = s.sideEngine == isa::Engine::Sync && kTailRows > 0 && fullTiles > 0 &&
                            onePiece && kTailRows <= geometry.partitionsPerDmaEngine();
    // The first tiles: lhsT's first direct M tile and rhs's first pass, their full K tiles.
    const int64_t firstRows =
        std::min(kMatmulPart, s.transposedRows > kMatmulPart ? m - s.transposedRows : m);
    const int64_t firstBytes = fullTiles * kMatmulPart * (firstRows + std::min(s.nTile, n)) * bytes;
    s.kTailDelay = params.intOr(
        "k_tail_delay", deferTails ? autoKTailDelay(firstBytes, s.scalarRhs ? 1 : 2, geometry) : 0);
    // Evictions (one fp32 PSUM element per engine cycle): ScalarE alone when it is the faster
    // copier and keeps pace with TensorE's tiles, so each result, the last ones too, reaches
    // its store sooner; not when it also triggers rhs loads.
    const double evictNs = static_cast<double>(std::min(s.nTile, n)) / geometry.scalarGhz;
    const double tileNs =
        static_cast<double>(kt) *
        matmulCycles(geometry, kMatmulPart, std::min(s.nTile, n), dtype == isa::Dtype::Fp32) /
        geometry.peGhz;
    if (evict == "auto" && !s.scalarRhs && geometry.scalarGhz > geometry.vectorGhz &&
        evictNs <= tileNs)
      s.evict = EvictEngines::Scalar;
    // Mode both has room for a deeper out ring (narrow tiles' stores queue less).
    if (!params.has("out_buffers") &&
        2 * outBytes(s) + transposedStagingBytes(s.transposedRows) + operandBytes <= capacity)
      s.outBuffers = 8;
    const int64_t narrow = n % s.nTile == 0 ? s.nTile : n % s.nTile;
    s.storeTiles =
        params.intOr("store_tiles", autoStoreTiles(kt, s.nTile, s.outBuffers, dtype, geometry));
    s.narrowStoreTiles =
        params.intOr("store_tiles", autoStoreTiles(kt, narrow, s.outBuffers, dtype, geometry));
    return s;
  }

  if (s.mode == MatmulMode::Resident) {
    if (!residentFits)
      throw Error(fmt::format(
          "matmul: mode resident needs {} bytes per partition for lhsT and two rhs tiles of "
          "K={} but SBUF has {}; use mode kblocked",
          residentFixed + 2 * rhsTileBytes, k, capacity));
    s.loadBuffers = lhsBuffers;
    s.loadChunks = params.intOr("load_chunks", 4);
    s.psumBuffers = params.intOr("psum_buffers", std::min<int64_t>(4, banks));
    return s;
  }

  s.blockM = params.intOr("block_m", 1);
  s.blockN = params.intOr("block_n", 1);
  if (s.blockM * s.blockN > banks)
    throw Error(
        fmt::format("matmul: parameters block_m x block_n are {} x {} but a PSUM block "
                    "holds at most {} banks",
                    s.blockM, s.blockN, banks));
  s.loadBuffers = params.intOr("load_buffers", 3);
  chooseBlock(s, mTiles, nTiles, m, n, bytes, banks, capacity, params.has("block_m"),
              params.has("block_n"));
  s.psumBuffers = params.intOr("psum_buffers", banks);
  if (s.psumBuffers < s.blockM * s.blockN)
    throw Error(
        fmt::format("matmul: psum_buffers {} is below block_m x block_n = {}, the banks "
                    "one kblocked PSUM block accumulates in",
                    s.psumBuffers, s.blockM * s.blockN));
  int64_t autoChunk = std::min<int64_t>(8, kt);
  while (autoChunk > 1 && kblockedSbufBytes(s, autoChunk, m, n, bytes) > capacity) --autoChunk;
  s.kChunk = std::min(params.intOr("k_chunk", autoChunk), kt);
  const int64_t need = kblockedSbufBytes(s, s.kChunk, m, n, bytes);
  if (need > capacity)
    throw Error(
        fmt::format("matmul: mode kblocked with block_m {}, block_n {}, k_chunk {} and "
                    "{} load buffers needs {} bytes per partition but SBUF has {}",
                    s.blockM, s.blockN, s.kChunk, s.loadBuffers, need, capacity));
  return s;
}

}  // namespace neuronsim::kernels
