// matmul's schedule parameters and how the automatic ones are chosen.
#include "kernels/matmul/matmul_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

namespace {

using isa::ceilDiv;

/// The integer parameter `name` when given, checked against [lo, hi]; `fallback` when unset.
int64_t knob(const ParamValues& params, const std::string& name, int64_t lo, int64_t hi,
             int64_t fallback) {
  if (!params.has(name)) return fallback;
  const int64_t v = params.getInt(name);
  if (v < lo || v > hi)
    throw Error(fmt::format("matmul: parameter {} is {} but must be in [{}, {}]", name, v, lo, hi));
  return v;
}

std::string choice(const ParamValues& params, const std::string& name) {
  return params.has(name) ? params.getString(name) : "auto";
}

int64_t outBytes(const MatmulSchedule& s) {
  return s.outBuffers * kMatmulFree * 4;
}

int64_t align64(int64_t b) {
  return (b + 63) / 64 * 64;
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

}  // namespace

std::vector<ParamSpec> matmulScheduleParams() {
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
               {"1", "2", "4"}),
      knobSpec("block_n", "kblocked: 512-column N tiles per PSUM block (auto: as block_m)",
               {"1", "2", "4"}),
      knobSpec("n_tile",
               "mode both: rhs columns per PSUM tile, 64..512 (auto: 384 when N > 512 is not a "
               "multiple of 512, else 512)",
               {"256", "384", "512"}),
      knobSpec("k_chunk",
               "kblocked: 128-row K tiles per operand load (auto: 8, fewer when SBUF is short)",
               {"2", "4", "8", "16"}),
      knobSpec("load_buffers",
               "kblocked: operand chunk buffers, 1-8 (auto: 3); resident: lhsT buffers (auto: 4 "
               "when they fit, else 2)",
               {"2", "3", "4"}),
      knobSpec("load_chunks",
               "DMAs per multi-K-tile load (mode both: of the first tiles), 1-64 (auto: resident "
               "4, both 1 for bf16, 2 for fp32)",
               {"1", "2", "4", "8"}),
      knobSpec("psum_buffers",
               "PSUM banks the accumulators rotate through (auto: resident 4, kblocked all)",
               {"2", "4", "8"}),
      knobSpec("out_buffers",
               "SBUF staging tiles for evicted results, 1-16 (auto: 4; 8 in mode both when it "
               "fits)",
               {"2", "4", "8"}),
      knobSpec("load_queues",
               "DMA queues the Sync-triggered loads spread over, q0..q(n-1), 1-6 (auto: 1, so "
               "loads land in order)",
               {"1", "2", "4"}),
      knobSpec("store_queues",
               "DMA queues the GpSimd-triggered stores spread over, the last n queues, 1-4 "
               "(auto: 2)",
               {"1", "2", "4"}),
      choiceSpec("store_engines",
                 "engines triggering the stores: gpsimd, or alternate (GpSimd and Sync on q6, "
                 "q7); auto: alternate in mode both (Sync is idle once its loads are out), else "
                 "gpsimd",
                 {"auto", "gpsimd", "alternate"}),
      choiceSpec("rhs_engine",
                 "engine triggering the rhs loads: sync (with lhsT) or scalar (q10, q11: two "
                 "engines share the 600 ns hwdge trigger cost); auto: sync",
                 {"auto", "sync", "scalar"}),
      knobSpec("ramp_chunks",
               "kblocked: the first block's chunks grow 1, 2, 4, ... K tiles so its first "
               "matmuls start early, 0 or 1 (auto: 1)",
               {"0", "1"}),
      choiceSpec("evict", "engines copying PSUM results to SBUF; auto: alternate VectorE, ScalarE",
                 {"auto", "alternate", "vector", "scalar"}),
      choiceSpec("m_tail",
                 "mode both: the last M tile of fewer than 128 rows computed direct, or "
                 "transposed (out^T = rhs^T lhsT: rhs 128-column chunks stationary, the few lhsT "
                 "columns moving, so each pass costs the 64-cycle floor instead of N columns); "
                 "auto: transposed when M > 128 and it has at most 64 rows at fp32, at most 16 "
                 "against K >= 1024 at bf16",
                 {"auto", "direct", "transposed"}),
  };
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
  s.outBuffers = knob(params, "out_buffers", 1, 16, 4);
  s.loadQueues = knob(params, "load_queues", 1, 6, 1);
  s.storeQueues = knob(params, "store_queues", 1, 4, 2);
  s.scalarRhs = choice(params, "rhs_engine") == "scalar";
  s.rampChunks = knob(params, "ramp_chunks", 0, 1, 1) == 1;

  // Resident: out ring + lhsT buffers + two rhs group buffers of at least one 512-column tile.
  // Four lhsT buffers (three loads ahead) when they fit beside the rhs group, else two.
  const int64_t rhsTileBytes = kt * std::min(n, kMatmulFree) * bytes;
  const auto residentBytes = [&](int64_t lhsBuffers) {
    return outBytes(s) + lhsBuffers * kt * kMatmulPart * bytes + 2 * rhsTileBytes;
  };
  const int64_t lhsBuffers =
      knob(params, "load_buffers", 1, 8, residentBytes(4) <= capacity ? 4 : 2);
  const int64_t residentFixed = outBytes(s) + lhsBuffers * kt * kMatmulPart * bytes;
  const bool residentFits = capacity - residentFixed >= 2 * rhsTileBytes;
  const int64_t tailBytes = 4 * kMatmulPart * 4;  // transposed tail staging (out_tail)
  const int64_t bothBytes = outBytes(s) + tailBytes + align64(kt * mTiles * kMatmulPart * bytes) +
                            align64(kt * nTiles * kMatmulFree * bytes);
  const bool bothFit = bothBytes <= capacity;
  // Mode both has room for a deeper out ring (narrow tiles' stores queue less).
  const bool bothDeeper = bothBytes + outBytes(s) <= capacity;
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
    s.loadChunks = knob(params, "load_chunks", 1, 64, dtype == isa::Dtype::Fp32 ? 2 : 1);
    // A ragged N ends in a narrow column pass; 384-column passes (measured on the test shapes)
    // trade a little per-matmul overhead for less data before the first matmul.
    s.nTile = knob(params, "n_tile", 64, kMatmulFree,
                   n > kMatmulFree && n % kMatmulFree != 0 ? 384 : kMatmulFree);
    s.psumBuffers = knob(params, "psum_buffers", 1, banks, std::min<int64_t>(4, banks));
    if (!params.has("out_buffers") && bothDeeper) s.outBuffers = 8;
    const std::string tail = choice(params, "m_tail");
    const int64_t tailRows = m % kMatmulPart;
    // Transposed tail passes cost the 64-cycle floor but their results take two more DMAs (a
    // transpose and a store): worth it when TensorE bounds the run (fp32), and at bf16 only for a
    // thin tail against deep K (measured on the test shapes: 8 rows with K 1030 gains 1.8 points
    // of roofline, 6 rows with K 520 or 60 rows with K 1100 lose 2 to 4).
    // Only behind direct tiles (M > 128): alone, the transpose's DMA latency is exposed.
    constexpr int64_t kMaxTailRows = 64, kThinBf16TailRows = 16, kDeepKTiles = 8;
    const bool autoTail =
        m > kMatmulPart && tailRows > 0 && tailRows <= kMaxTailRows &&
        (dtype == isa::Dtype::Fp32 || (tailRows <= kThinBf16TailRows && kt >= kDeepKTiles));
    s.transposedTail = tail == "transposed" ? tailRows > 0 : tail == "auto" && autoTail;
    return s;
  }

  if (s.mode == MatmulMode::Resident) {
    if (!residentFits)
      throw Error(fmt::format(
          "matmul: mode resident needs {} bytes per partition for lhsT and two rhs tiles of "
          "K={} but SBUF has {}; use mode kblocked",
          residentFixed + 2 * rhsTileBytes, k, capacity));
    s.loadBuffers = lhsBuffers;
    s.loadChunks = knob(params, "load_chunks", 1, 64, 4);
    s.psumBuffers = knob(params, "psum_buffers", 1, banks, std::min<int64_t>(4, banks));
    return s;
  }

  s.blockM = knob(params, "block_m", 1, banks, 1);
  s.blockN = knob(params, "block_n", 1, banks, 1);
  if (s.blockM * s.blockN > banks)
    throw Error(
        fmt::format("matmul: parameters block_m x block_n are {} x {} but a PSUM block "
                    "holds at most {} banks",
                    s.blockM, s.blockN, banks));
  s.loadBuffers = knob(params, "load_buffers", 1, 8, 3);
  chooseBlock(s, mTiles, nTiles, m, n, bytes, banks, capacity, params.has("block_m"),
              params.has("block_n"));
  s.psumBuffers = knob(params, "psum_buffers", s.blockM * s.blockN, banks, banks);
  int64_t autoChunk = std::min<int64_t>(8, kt);
  while (autoChunk > 1 && kblockedSbufBytes(s, autoChunk, m, n, bytes) > capacity) --autoChunk;
  s.kChunk = std::min(knob(params, "k_chunk", 1, 1 << 20, autoChunk), kt);
  const int64_t need = kblockedSbufBytes(s, s.kChunk, m, n, bytes);
  if (need > capacity)
    throw Error(
        fmt::format("matmul: mode kblocked with block_m {}, block_n {}, k_chunk {} and "
                    "{} load buffers needs {} bytes per partition but SBUF has {}",
                    s.blockM, s.blockN, s.kChunk, s.loadBuffers, need, capacity));
  return s;
}

}  // namespace neuronsim::kernels
