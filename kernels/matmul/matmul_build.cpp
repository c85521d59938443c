// The tiled matmul program in its two schedules: resident (rhs column groups kept in SBUF, lhsT
// streamed per M tile, one PSUM bank per output tile) and kblocked (an output block accumulates
// in PSUM while K streams through in multi-tile chunks). PSUM is evicted by VectorE/ScalarE and
// stored from GpSimd's queues; loads are triggered by Sync.
#include "kernels/matmul/matmul_build.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "isa/dtype.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kPart = kMatmulPart;
constexpr int64_t kFree = kMatmulFree;

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Stores are triggered from GpSimd (queues q(16-n)..q15) so that Sync's in-order stream of loads
/// (prefetches) never waits behind a store that waits for compute.
constexpr DmaOptions kStore{.queue = -1, .issue = isa::Engine::GpSimd};

/// Where loads are triggered: lhsT on Sync, cycling over queues q0..q(n-1) (with one queue the
/// transfers complete in order at full bandwidth, so the tiles the first matmuls need arrive
/// first); rhs on Sync too, or with `scalarRhs` on ScalarE's queues q10, q11 so that two
/// engines pay the trigger cost.
class LoadQueues {
 public:
  LoadQueues(int64_t count, bool scalarRhs) : count_(count), scalarRhs_(scalarRhs) {}
  DmaOptions lhs() { return {.queue = static_cast<int32_t>(next_++ % count_)}; }
  /// Small transfers (K tails, narrow last tiles) on q8, q9, so that they neither wait behind
  /// nor hold up the large ones (a queue admits two transfers at a time).
  DmaOptions side() { return {.queue = static_cast<int32_t>(kSideQueue + sideNext_++ % 2)}; }
  DmaOptions rhs() {
    if (!scalarRhs_) return lhs();
    return {.queue = static_cast<int32_t>(kScalarQueue + scalarNext_++ % 2),
            .issue = isa::Engine::Scalar};
  }

 private:
  static constexpr int32_t kSideQueue = 8;
  static constexpr int32_t kScalarQueue = 10;
  int64_t count_;
  bool scalarRhs_;
  int64_t next_ = 0, sideNext_ = 0, scalarNext_ = 0;
};

/// One DMA's share of a K-row load: K tiles [t0, t1), or the tail of fewer than 128 rows.
struct KPiece {
  int64_t t0, t1;
  bool tail;
};

/// How `rows` K rows (from a K-tile boundary) are loaded: the full K tiles in up to `chunks`
/// DMAs (so matmuls can start on the first), a tail of fewer than 128 rows in one more.
std::vector<KPiece> kPieces(int64_t rows, int64_t chunks) {
  const int64_t full = rows / kPart;
  const int64_t parts = std::min(chunks, full);
  std::vector<KPiece> pieces;
  for (int64_t c = 0; c < parts; ++c)
    pieces.push_back({full * c / parts, full * (c + 1) / parts, false});
  if (rows % kPart > 0) pieces.push_back({full, full + 1, true});
  return pieces;
}

/// Copies `piece` of `src` (a [rows, cols] HBM view starting on a K-tile boundary) into tile
/// [128, tiles, cols].
void loadKPiece(KernelBuilder& b, const HbmView& src, const Tile& dst, const KPiece& piece,
                DmaOptions options) {
  if (piece.tail) {
    const int64_t tail = src.size(0) - piece.t0 * kPart;
    b.dmaCopy(dst.partitionSlice(0, static_cast<int32_t>(tail)).select(0, piece.t0),
              src.slice(0, piece.t0 * kPart, src.size(0)), options);
    return;
  }
  HbmView body = src.slice(0, piece.t0 * kPart, piece.t1 * kPart)
                     .split(0, {piece.t1 - piece.t0, kPart})
                     .permute({1, 0, 2});
  b.dmaCopy(dst.slice(0, piece.t0, piece.t1), body, options);
}

void loadKRows(KernelBuilder& b, const HbmView& src, const Tile& dst, int64_t chunks,
               const std::function<DmaOptions()>& queue) {
  for (const KPiece& piece : kPieces(src.size(0), chunks)) loadKPiece(b, src, dst, piece, queue());
}

/// Copies PSUM results to SBUF on the schedule's engines (alternating: VectorE, then ScalarE).
class Evictor {
 public:
  Evictor(KernelBuilder& b, EvictEngines engines) : b_(b), engines_(engines) {}
  void operator()(const Tile& dst, const Tile& src) {
    const bool vector = engines_ == EvictEngines::Vector ||
                        (engines_ == EvictEngines::Alternate && count_++ % 2 == 0);
    if (vector) {
      b_.tensorCopy(dst, src, isa::Engine::Vector);
    } else {
      b_.activation(dst, src, isa::ActFn::Copy);
    }
  }

 private:
  KernelBuilder& b_;
  EvictEngines engines_;
  int64_t count_ = 0;
};

std::vector<Tile> ring(KernelBuilder& b, int64_t count, const std::vector<int64_t>& shape,
                       isa::Dtype dtype, const std::string& name, bool psum = false) {
  std::vector<Tile> tiles;
  for (int64_t i = 0; i < count; ++i) {
    const std::string tileName = name + "_" + std::to_string(i);
    tiles.push_back(psum ? b.psum(shape, dtype, tileName) : b.sbuf(shape, dtype, tileName));
  }
  return tiles;
}

/// [ms, ns] corner of a [128, 512] tile.
Tile corner(const Tile& t, int64_t ms, int64_t ns) {
  return t.partitionSlice(0, static_cast<int32_t>(ms)).slice(0, 0, ns);
}

/// Evicts `ps` through the out ring and stores it to out[m0:m0+ms, n0:n0+ns].
struct ResultWriter {
  KernelBuilder& b;
  const HbmView& out;
  std::vector<Tile> outs;
  Evictor evict;
  bool syncStores = false;  ///< every other store triggered by Sync (q6, q7)
  int64_t count = 0;
  void operator()(const Tile& ps, int64_t m0, int64_t ms, int64_t n0, int64_t ns) {
    const int64_t index = count++;
    const Tile ot = corner(outs[index % outs.size()], ms, ns);
    b.setNote("evict psum");
    evict(ot, ps);
    b.setNote("store out");
    const DmaOptions options = syncStores && index % 2 == 1
                                   ? DmaOptions{.queue = static_cast<int32_t>(6 + index / 2 % 2)}
                                   : kStore;
    b.dmaCopy(out.slice(0, m0, m0 + ms).slice(1, n0, n0 + ns), ot, options);
  }
};

/// Tile ranges [1, 2), [2, 4), [4, 8), ... up to `count`: one load each, so the first tiles
/// arrive early and few triggers load the rest.
std::vector<std::pair<int64_t, int64_t>> doublingRanges(int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t t0 = 1; t0 < count; t0 *= 2) ranges.emplace_back(t0, std::min(count, 2 * t0));
  return ranges;
}

/// Which K rows of a column-tile load: the full K tiles or the tail of fewer than 128 rows.
enum class KRows { Body, Tail };

/// Loads `rows` of column tiles [t0, t1) of `src` (an operand [K, cols]) into `dst`
/// [128, tiles, kt, width] (each tile contiguous per partition, so the builder sees tiles as
/// separate regions): full-width tiles in one DMA on `queue`, a narrower last tile in its own on
/// `side`.
void loadColumnTiles(KernelBuilder& b, const HbmView& src, const Tile& dst, int64_t width,
                     int64_t t0, int64_t t1, KRows rows, const std::function<DmaOptions()>& queue,
                     const std::function<DmaOptions()>& side) {
  const int64_t K = src.size(0), cols = src.size(1);
  const int64_t fullK = K / kPart * kPart, tail = K - fullK, kt = fullK / kPart;
  const int64_t fullEnd = std::min(t1, cols / width);  // tiles [t0, fullEnd) are full width
  auto load = [&](int64_t a, int64_t z, int64_t w) {   // tiles [a, z) of width w
    const auto& options = w == width ? queue : side;
    const HbmView block = src.slice(1, a * width, a * width + (z - a - 1) * width + w);
    const Tile tiles = dst.slice(0, a, z).slice(2, 0, w);
    if (rows == KRows::Body && kt > 0)
      b.dmaCopy(
          tiles.slice(1, 0, kt),
          block.slice(0, 0, fullK).split(0, {kt, kPart}).split(2, {z - a, w}).permute({1, 2, 0, 3}),
          options());
    if (rows == KRows::Tail && tail > 0)
      b.dmaCopy(tiles.select(1, kt).partitionSlice(0, static_cast<int32_t>(tail)),
                block.slice(0, fullK, K).split(1, {z - a, w}), options());
  };
  if (fullEnd > t0) load(t0, fullEnd, width);
  if (t1 > fullEnd) load(fullEnd, t1, cols - fullEnd * width);
}

/// Resident mode with all of lhsT in SBUF too: the output is computed column tile by column tile
/// (each rhs tile read once, streamed past every lhsT tile), so after the first tile each step
/// needs little new data. The first lhsT and rhs tiles load piece by piece along K, the rest in
/// doubling ranges of tiles.
void buildBothResident(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                       ResultWriter& write, isa::Dtype dtype, const MatmulSchedule& s) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = ceilDiv(K, kPart), mTiles = ceilDiv(M, kPart), nTiles = ceilDiv(N, s.nTile);
  const Tile lhsBuf = b.sbuf({kPart, mTiles, kt, kPart}, dtype, "lhsT");
  const Tile rhsBuf = b.sbuf({kPart, nTiles, kt, s.nTile}, dtype, "rhs");
  const std::vector<Tile> psums =
      ring(b, s.psumBuffers, {kPart, kFree}, isa::Dtype::Fp32, "acc", true);
  LoadQueues queues(s.loadQueues, s.scalarRhs);
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };
  const auto sideQueue = [&] { return queues.side(); };
  const auto rhsCols = [&](int64_t nj) {
    return std::pair{nj * s.nTile, std::min(N, (nj + 1) * s.nTile)};
  };
  const int64_t ms0 = std::min(M, kPart);
  const auto [n0First, n1First] = rhsCols(0);
  // The first tiles of both operands, K piece by K piece; the K tail of every tile at once.
  for (const KPiece& piece : kPieces(K, s.loadChunks)) {
    if (piece.tail) {
      b.setNote("load lhsT");
      loadColumnTiles(b, lhsT, lhsBuf, kPart, 0, mTiles, KRows::Tail, sideQueue, sideQueue);
      b.setNote("load rhs");
      loadColumnTiles(b, rhs, rhsBuf, s.nTile, 0, nTiles, KRows::Tail, sideQueue, sideQueue);
      continue;
    }
    b.setNote("load lhsT");
    loadKPiece(b, lhsT.slice(1, 0, ms0), lhsBuf.select(0, 0).slice(1, 0, ms0), piece, queues.lhs());
    b.setNote("load rhs");
    loadKPiece(b, rhs.slice(1, n0First, n1First),
               rhsBuf.select(0, 0).slice(1, 0, n1First - n0First), piece, queues.rhs());
  }
  // Every load is emitted before the compute (nothing is reused, so nothing waits): the rest of
  // lhsT first (the first column pass needs it), then the rest of rhs.
  b.setNote("load lhsT");
  for (const auto& [t0, t1] : doublingRanges(mTiles))
    loadColumnTiles(b, lhsT, lhsBuf, kPart, t0, t1, KRows::Body, lhsQueue, lhsQueue);
  b.setNote("load rhs");
  for (const auto& [t0, t1] : doublingRanges(nTiles))
    loadColumnTiles(b, rhs, rhsBuf, s.nTile, t0, t1, KRows::Body, rhsQueue, rhsQueue);
  int64_t tileIndex = 0;
  for (int64_t nj = 0; nj < nTiles; ++nj) {
    const auto [n0, n1] = rhsCols(nj);
    const int64_t ns = n1 - n0;
    const Tile rhsTile = rhsBuf.select(0, nj).slice(1, 0, ns);
    for (int64_t mi = 0; mi < mTiles; ++mi) {
      const int64_t m0 = mi * kPart, ms = std::min(kPart, M - m0);
      const Tile lhsTile = lhsBuf.select(0, mi).slice(1, 0, ms);
      const Tile ps = corner(psums[tileIndex++ % psums.size()], ms, ns);
      b.setNote("matmul");
      for (int64_t k = 0; k < kt; ++k) {
        const int32_t ks = static_cast<int32_t>(std::min(kPart, K - k * kPart));
        b.matmul(ps, lhsTile.partitionSlice(0, ks).select(0, k),
                 rhsTile.partitionSlice(0, ks).select(0, k), k > 0);
      }
      write(ps, m0, ms, n0, ns);
    }
  }
}

void buildResident(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, ResultWriter& write,
                   isa::Dtype dtype, const MatmulSchedule& s) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = ceilDiv(K, kPart);
  const int64_t bytes = isa::dtypeBytes(dtype);
  const int64_t fixed = s.outBuffers * kFree * 4 + s.loadBuffers * kt * kPart * bytes;
  const int64_t room = b.geometry().sbufPartitionBytes - fixed;
  // All of rhs in one buffer when it fits; else two buffers of as many 512-column tiles as fit.
  const bool whole = room >= kt * N * bytes;
  const int64_t groupTiles = std::max<int64_t>(1, room / 2 / (kt * kFree * bytes));
  const int64_t groupCols = whole ? N : std::min(N, groupTiles * kFree);
  const std::vector<Tile> rhsBuf = ring(b, whole ? 1 : 2, {kPart, kt, groupCols}, dtype, "rhs");
  const std::vector<Tile> lhsBuf = ring(b, s.loadBuffers, {kPart, kt, kPart}, dtype, "lhsT");
  const std::vector<Tile> psums =
      ring(b, s.psumBuffers, {kPart, kFree}, isa::Dtype::Fp32, "acc", true);
  LoadQueues queues(s.loadQueues, s.scalarRhs);
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };

  int64_t group = 0, mIndex = 0, tileIndex = 0;
  for (int64_t g0 = 0; g0 < N; g0 += groupCols, ++group) {
    const int64_t gs = std::min(groupCols, N - g0);
    const Tile rb = rhsBuf[group % rhsBuf.size()].slice(1, 0, gs);
    const auto rhsView = [&](int64_t n0) {
      return rhs.slice(1, g0 + n0, g0 + std::min(gs, n0 + kFree));
    };
    const auto rhsTile = [&](int64_t n0) { return rb.slice(1, n0, std::min(gs, n0 + kFree)); };
    for (int64_t m0 = 0; m0 < M; m0 += kPart, ++mIndex) {
      const int64_t ms = std::min(kPart, M - m0);
      const Tile lb = lhsBuf[mIndex % lhsBuf.size()].slice(1, 0, ms);
      const HbmView lhsView = lhsT.slice(1, m0, m0 + ms);
      b.setNote("load lhsT");
      if (m0 > 0) {
        loadKRows(b, lhsView, lb, s.loadChunks, lhsQueue);
      } else {
        // The group's first tile: lhsT and the first rhs tile piece by piece, in the order the
        // first matmuls use them; then the group's other rhs tiles.
        for (const KPiece& piece : kPieces(K, s.loadChunks)) {
          b.setNote("load lhsT");
          loadKPiece(b, lhsView, lb, piece, queues.lhs());
          b.setNote("load rhs");
          loadKPiece(b, rhsView(0), rhsTile(0), piece, queues.rhs());
        }
        b.setNote("load rhs");
        for (int64_t n0 = kFree; n0 < gs; n0 += kFree)
          loadKRows(b, rhsView(n0), rhsTile(n0), s.loadChunks, rhsQueue);
      }
      for (int64_t n0 = 0; n0 < gs; n0 += kFree, ++tileIndex) {
        const int64_t ns = std::min(kFree, gs - n0);
        const Tile ps = corner(psums[tileIndex % psums.size()], ms, ns);
        b.setNote("matmul");
        for (int64_t k = 0; k < kt; ++k) {
          const int32_t ks = static_cast<int32_t>(std::min(kPart, K - k * kPart));
          b.matmul(ps, lb.partitionSlice(0, ks).select(0, k),
                   rb.partitionSlice(0, ks).select(0, k).slice(0, n0, n0 + ns), k > 0);
        }
        write(ps, m0, ms, g0 + n0, ns);
      }
    }
  }
}

/// K-tile counts of the chunks of one block: the first block ramps up 1, 2, 4, ... to kChunk so
/// that its first matmuls wait for a small load, later blocks (prefetched) use kChunk.
std::vector<int64_t> chunkSizes(int64_t kt, int64_t kChunk, bool ramp) {
  std::vector<int64_t> sizes;
  int64_t size = ramp ? 1 : kChunk;
  for (int64_t done = 0; done < kt; done += sizes.back()) {
    sizes.push_back(std::min({size, kChunk, kt - done}));
    size *= 2;
  }
  return sizes;
}

void buildKBlocked(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, ResultWriter& write,
                   isa::Dtype dtype, const MatmulSchedule& s) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = ceilDiv(K, kPart);
  const int64_t blockRows = std::min(M, s.blockM * kPart);
  const int64_t blockCols = std::min(N, s.blockN * kFree);
  const std::vector<Tile> lhsBuf =
      ring(b, s.loadBuffers, {kPart, s.kChunk, blockRows}, dtype, "lhsT");
  const std::vector<Tile> rhsBuf =
      ring(b, s.loadBuffers, {kPart, s.kChunk, blockCols}, dtype, "rhs");
  // Accumulators take the banks in turn, so a block's first tiles reuse the banks the previous
  // block evicts first.
  const std::vector<Tile> psums =
      ring(b, s.psumBuffers, {kPart, kFree}, isa::Dtype::Fp32, "acc", true);
  LoadQueues queues(s.loadQueues, s.scalarRhs);
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };

  int64_t block = 0, chunk = 0, bank = 0;
  for (int64_t m0 = 0; m0 < M; m0 += blockRows)
    for (int64_t n0 = 0; n0 < N; n0 += blockCols, ++block) {
      const int64_t rows = std::min(blockRows, M - m0), cols = std::min(blockCols, N - n0);
      const int64_t mTiles = ceilDiv(rows, kPart), nTiles = ceilDiv(cols, kFree);
      std::vector<Tile> acc;
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t ni = 0; ni < nTiles; ++ni)
          acc.push_back(corner(psums[bank++ % psums.size()], std::min(kPart, rows - mi * kPart),
                               std::min(kFree, cols - ni * kFree)));
      int64_t c0 = 0;
      for (int64_t tiles : chunkSizes(kt, s.kChunk, block == 0 && s.rampChunks)) {
        const int64_t k0 = c0 * kPart, k1 = std::min(K, (c0 + tiles) * kPart);
        const Tile lb = lhsBuf[chunk % s.loadBuffers].slice(0, 0, tiles).slice(1, 0, rows);
        const Tile rb = rhsBuf[chunk % s.loadBuffers].slice(0, 0, tiles).slice(1, 0, cols);
        ++chunk;
        b.setNote("load lhsT");
        loadKRows(b, lhsT.slice(0, k0, k1).slice(1, m0, m0 + rows), lb, 1, lhsQueue);
        b.setNote("load rhs");
        loadKRows(b, rhs.slice(0, k0, k1).slice(1, n0, n0 + cols), rb, 1, rhsQueue);
        b.setNote("matmul");
        for (int64_t t = 0; t < tiles; ++t) {
          const int32_t ks = static_cast<int32_t>(std::min(kPart, K - (c0 + t) * kPart));
          for (int64_t mi = 0; mi < mTiles; ++mi) {
            const int64_t ms = std::min(kPart, rows - mi * kPart);
            const Tile stationary =
                lb.partitionSlice(0, ks).select(0, t).slice(0, mi * kPart, mi * kPart + ms);
            for (int64_t ni = 0; ni < nTiles; ++ni) {
              const int64_t ns = std::min(kFree, cols - ni * kFree);
              b.matmul(acc[mi * nTiles + ni], stationary,
                       rb.partitionSlice(0, ks).select(0, t).slice(0, ni * kFree, ni * kFree + ns),
                       c0 + t > 0);
            }
          }
        }
        c0 += tiles;
      }
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t ni = 0; ni < nTiles; ++ni)
          write(acc[mi * nTiles + ni], m0 + mi * kPart, std::min(kPart, rows - mi * kPart),
                n0 + ni * kFree, std::min(kFree, cols - ni * kFree));
    }
}

}  // namespace

void buildMatmul(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, const HbmView& out,
                 isa::Dtype dtype, const MatmulSchedule& schedule) {
  std::vector<int32_t> storeQueues;
  const int64_t queues = b.geometry().dmaQueues;  // the last store_queues of them
  for (int64_t q = std::max<int64_t>(0, queues - schedule.storeQueues); q < queues; ++q)
    storeQueues.push_back(static_cast<int32_t>(q));
  b.setDmaQueues(storeQueues, isa::Engine::GpSimd);
  ResultWriter write{b, out, ring(b, schedule.outBuffers, {kPart, kFree}, isa::Dtype::Fp32, "out"),
                     Evictor(b, schedule.evict), schedule.syncStores};
  if (schedule.mode == MatmulMode::BothResident) {
    buildBothResident(b, lhsT, rhs, write, dtype, schedule);
  } else if (schedule.mode == MatmulMode::Resident) {
    buildResident(b, lhsT, rhs, write, dtype, schedule);
  } else {
    buildKBlocked(b, lhsT, rhs, write, dtype, schedule);
  }
}

}  // namespace neuronsim::kernels
