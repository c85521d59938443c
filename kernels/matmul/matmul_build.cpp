// The tiled matmul program in its three schedules: both (lhsT and rhs resident, column pass by
// column pass, a thin last M tile optionally computed transposed), resident (rhs column groups
// kept in SBUF, lhsT streamed per M tile) and kblocked (an output block accumulates in PSUM while
// K streams through in multi-tile chunks). PSUM is evicted by VectorE/ScalarE and stored from
// GpSimd's queues (and Sync's in mode both); loads are triggered by Sync.
#include "kernels/matmul/matmul_build.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "isa/dtype.h"
#include "isa/size_limits.h"
#include "kernels/builder/pipeline.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kPart = kMatmulPart;
constexpr int64_t kFree = kMatmulFree;

using isa::ceilDiv;

/// Stores are triggered from GpSimd (on the last n queues) so that Sync's in-order stream of
/// loads (prefetches) never waits behind a store that waits for compute.
constexpr DmaOptions kStore{.queue = -1, .issue = isa::Engine::GpSimd};

/// Where loads are triggered: lhsT on Sync, cycling over queues q0..q(n-1) (with one queue the
/// transfers complete in order at full bandwidth, so the tiles the first matmuls need arrive
/// first); rhs on Sync too, or with `scalarRhs` on ScalarE's own queues so that two engines pay
/// the trigger cost; K tails on queues of their own (triggered by Sync or, with `sideEngine`
/// GpSimd, by software descriptors), so that they neither wait behind nor hold up the large ones
/// (a queue admits two transfers at a time).
class LoadQueues {
 public:
  LoadQueues(int64_t count, bool scalarRhs, isa::Engine sideEngine, const MatmulQueues& layout)
      : lhs_(QueueCycle::span(0, static_cast<int32_t>(count))),
        side_(QueueCycle::span(layout.side(), layout.unit)),
        scalar_(QueueCycle::span(layout.scalarRhs(), layout.unit)),
        scalarRhs_(scalarRhs),
        sideEngine_(sideEngine) {}
  DmaOptions lhs() {
    ++syncLoads_;
    return {.queue = lhs_.next()};
  }
  /// Loads triggered by Sync so far.
  int64_t syncLoads() const { return syncLoads_; }
  DmaOptions side() { return {.queue = side_.next(), .issue = sideEngine_}; }
  DmaOptions rhs() {
    if (!scalarRhs_) return lhs();
    return {.queue = scalar_.next(), .issue = isa::Engine::Scalar};
  }

 private:
  QueueCycle lhs_;
  QueueCycle side_;
  QueueCycle scalar_;
  bool scalarRhs_;
  isa::Engine sideEngine_;
  int64_t syncLoads_ = 0;
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

/// The engines that evict PSUM under `engines` (alternating: VectorE, then ScalarE).
std::vector<isa::Engine> evictEngines(EvictEngines engines) {
  switch (engines) {
    case EvictEngines::Vector:
      return {isa::Engine::Vector};
    case EvictEngines::Scalar:
      return {isa::Engine::Scalar};
    case EvictEngines::Alternate:
      break;
  }
  return {isa::Engine::Vector, isa::Engine::Scalar};
}

/// [ms, ns] corner of a [128, 512] tile.
Tile corner(const Tile& t, int64_t ms, int64_t ns) {
  return t.partitionSlice(0, static_cast<int32_t>(ms)).slice(0, 0, ns);
}

/// Evicts `ps` through the out ring and stores it to out[m0:m0+ms, n0:n0+ns]; the results of up
/// to `storeTiles` consecutive M tiles of one column pass (adjacent ring slots) go out in one DMA.
struct ResultWriter {
  KernelBuilder& b;
  const HbmView& out;
  Tile outRing;  ///< [128, slots, 512] fp32: the evicted results, slot by slot
  PsumEvictor evict;
  bool syncStores = false;      ///< every other wide store triggered by Sync on its own queues
  QueueCycle syncQueues;        ///< Sync's stores and transposes
  int64_t storeTiles = 1;       ///< direct results per store DMA
  BufferRing tailEvicted = {};  ///< transposed(): [128, rows] fp32 staging of the evictions
  BufferRing tailRows = {};     ///< transposed(): [128, 128] blocks of them turned into rows
  int64_t written = 0;
  int64_t wideStores = 0;  ///< stores of more rows than one DMA engine's partitions
  std::function<void()> pendingStore = {};
  int64_t pendingAfter = 0;  ///< direct writes before pendingStore is emitted
  /// The direct results evicted but not yet stored: ring slots [slot0, slot0 + count) holding
  /// out[m0:m0+count*ms, n0:n0+ns].
  struct Group {
    int64_t slot0 = 0, count = 0, m0 = 0, ms = 0, n0 = 0, ns = 0;
  } group = {};

  int64_t slots() const { return outRing.size(0); }

  void operator()(const Tile& ps, int64_t m0, int64_t ms, int64_t n0, int64_t ns) {
    const int64_t slot = written++ % slots();
    const bool continues = group.count > 0 && slot == group.slot0 + group.count && ms == group.ms &&
                           n0 == group.n0 && ns == group.ns &&
                           m0 == group.m0 + group.count * group.ms;
    if (!continues) storeGroup();
    b.setNote("evict psum");
    evict(outRing.select(0, slot).partitionSlice(0, static_cast<int32_t>(ms)).slice(0, 0, ns), ps);
    if (continues)
      ++group.count;
    else
      group = {slot, 1, m0, ms, n0, ns};
    if (group.count >= storeTiles) storeGroup();
    if (pendingStore && --pendingAfter <= 0) storeTransposed();
  }
  /// Stores the pending group of direct results in one DMA.
  void storeGroup() {
    if (group.count == 0) return;
    const Group g = std::exchange(group, Group{});
    b.setNote("store out");
    // A thin store (rows on one DMA engine, a few descriptors) is cheaper as GpSimd's software
    // descriptors (about its fixed start) than as Sync's hwdge trigger where that takes longer
    // (Trn2: 125 against 600 ns); the wide ones alternate.
    const isa::Geometry& machine = b.geometry();
    const bool thin =
        g.ms <= machine.partitionsPerDmaEngine() &&
        static_cast<double>(machine.gpsimdStartCycles) / machine.gpsimdGhz < machine.dmaTriggerNs;
    const bool onSync = syncStores && !thin && wideStores++ % 2 == 1;
    const DmaOptions options = onSync ? DmaOptions{.queue = syncQueues.next()} : kStore;
    const Tile rows = outRing.partitionSlice(0, static_cast<int32_t>(g.ms));
    const Tile src = g.count == 1 ? rows.select(0, g.slot0).slice(0, 0, g.ns)
                                  : rows.slice(0, g.slot0, g.slot0 + g.count).slice(1, 0, g.ns);
    b.dmaCopy(out.slice(0, g.m0, g.m0 + g.count * g.ms)
                  .slice(1, g.n0, g.n0 + g.ns)
                  .split(0, {g.count, g.ms})
                  .permute({1, 0, 2}),
              src, options);
  }
  /// Evicts `ps` [width, count * ms], the transposed result of `count` column chunks of `width`
  /// (count * ms <= 128, or count 1), turns it back by SBUF-to-SBUF DMA transposes (Sync,
  /// q6/q7), one per 128 rows, into [rows, width] blocks and stores them to out[m0:m0+ms,
  /// n0:n0+count*width] in rows. The stores are emitted two direct results later (or at
  /// finish()), so that GpSimd's in-order stream of stores does not wait for the transposes.
  void transposed(const Tile& ps, int64_t m0, int64_t ms, int64_t n0, int64_t width,
                  int64_t count) {
    finish();
    const int64_t rows = count * ms;
    const Tile ot = corner(tailEvicted.next(), width, rows);
    b.setNote("evict psum");
    evict(ot, ps);
    std::vector<std::pair<Tile, HbmView>> blocks;
    for (int64_t r0 = 0; r0 < rows; r0 += kPart) {
      const int64_t rb = std::min(kPart, rows - r0);
      const Tile block = corner(tailRows.next(), rb, width);
      b.setNote("transpose out");
      b.dmaTranspose(block, ot.slice(0, r0, r0 + rb), DmaOptions{.queue = syncQueues.next()});
      blocks.emplace_back(block,
                          count > 1 ? out.slice(0, m0, m0 + ms)
                                          .slice(1, n0, n0 + count * width)
                                          .split(1, {count, width})
                                          .permute({1, 0, 2})
                                    : out.slice(0, m0 + r0, m0 + r0 + rb).slice(1, n0, n0 + width));
    }
    pendingStore = [this, blocks] {
      b.setNote("store out");
      for (const auto& [block, dst] : blocks) b.dmaCopy(dst, block, kStore);
    };
    pendingAfter = 2;
  }
  /// Emits every store still pending.
  void finish() {
    storeGroup();
    storeTransposed();
  }
  /// Emits the deferred store of the last transposed result, if any.
  void storeTransposed() {
    if (!pendingStore) return;
    pendingStore();
    pendingStore = nullptr;
  }
};

/// Tile ranges [1, 2), [2, 4), [4, 8), ... up to `count`: one load each, so the first tiles
/// arrive early and few triggers load the rest.
std::vector<std::pair<int64_t, int64_t>> doublingRanges(int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t t0 = 1; t0 < count; t0 *= 2) ranges.emplace_back(t0, std::min(count, 2 * t0));
  return ranges;
}

/// An operand's columns split along K: the full 128-row K tiles and the tail of fewer rows.
struct KSplit {
  Tile body;  ///< [128, full K tiles, cols]; unset when K < 128
  Tile tail;  ///< [K % 128, cols]; unset when K is a multiple of 128
  int64_t fullTiles = 0;
  int64_t tiles() const { return fullTiles + (tail.partitions() > 0 ? 1 : 0); }
  /// K tile `k` ([128 or the tail's rows, cols]).
  Tile operator[](int64_t k) const { return k < fullTiles ? body.select(0, k) : tail; }
  /// Columns [c0, c1).
  KSplit columns(int64_t c0, int64_t c1) const {
    KSplit out = *this;
    if (fullTiles > 0) out.body = body.slice(1, c0, c1);
    if (tail.partitions() > 0) out.tail = tail.slice(0, c0, c1);
    return out;
  }
};

/// Loads the full K tiles of column tiles [t0, t1) of `src` (an operand [K, cols]) into `dst`
/// [128, tiles, kt, width] (each tile contiguous per partition, so the builder sees tiles as
/// separate regions): full-width tiles in one DMA, a narrower last tile in its own.
void loadColumnTiles(KernelBuilder& b, const HbmView& src, const Tile& dst, int64_t width,
                     int64_t t0, int64_t t1, const std::function<DmaOptions()>& queue) {
  const int64_t cols = src.size(1), kt = src.size(0) / kPart;
  if (kt == 0) return;
  const int64_t fullEnd = std::min(t1, cols / width);  // tiles [t0, fullEnd) are full width
  auto load = [&](int64_t a, int64_t z, int64_t w) {   // tiles [a, z) of width w
    const HbmView block = src.slice(1, a * width, a * width + (z - a - 1) * width + w);
    b.dmaCopy(dst.slice(0, a, z).slice(2, 0, w).slice(1, 0, kt),
              block.slice(0, 0, kt * kPart)
                  .split(0, {kt, kPart})
                  .split(2, {z - a, w})
                  .permute({1, 2, 0, 3}),
              queue());
  };
  if (fullEnd > t0) load(t0, fullEnd, width);
  if (t1 > fullEnd) load(fullEnd, t1, cols - fullEnd * width);
}

/// The last `ms` <= 512 rows of M (lhsTail: their K tiles, [.., ms]) against one column pass of
/// rhs (rhsPass: [.., ns], out columns n0..n0+ns), computed transposed: out^T = rhs^T lhsT, each
/// 128-column chunk of rhs stationary and the ms lhsT columns moving, so a thin tail's pass
/// costs the 64-cycle floor rather than ns columns, and a wide one hides each chunk's
/// stationary load. Full chunks of a thin tail share a PSUM tile ([128, chunks * ms]).
void buildTransposedTail(KernelBuilder& b, const KSplit& lhsTail, const KSplit& rhsPass, int64_t ms,
                         int64_t ns, int64_t m0, int64_t n0, const BufferRing& psums,
                         int64_t& tileIndex, ResultWriter& write) {
  const int64_t kt = lhsTail.tiles();
  const int64_t perGroup = std::max<int64_t>(1, kPart / ms);  // chunks per PSUM tile
  for (int64_t c0 = 0; c0 < ns;) {
    // A group: full 128-column chunks that fit one PSUM tile, or the narrower last chunk.
    const int64_t width = std::min(kPart, ns - c0);
    const int64_t count = width < kPart ? 1 : std::min(perGroup, (ns - c0) / kPart);
    const Tile ps = corner(psums[tileIndex++], width, count * ms);
    b.setNote("matmul (transposed tail)");
    for (int64_t c = 0; c < count; ++c) {
      const KSplit rhsChunk = rhsPass.columns(c0 + c * width, c0 + (c + 1) * width);
      const Tile acc = ps.slice(0, c * ms, (c + 1) * ms);
      for (int64_t k = 0; k < kt; ++k) b.matmul(acc, rhsChunk[k], lhsTail[k], k > 0);
    }
    write.transposed(ps, m0, ms, n0 + c0, width, count);
    c0 += count * width;
  }
}

/// Mode both's lhsT tiles: [128, tiles, full K tiles, width] over lhsT columns [col0, col0 +
/// cols).
struct LhsGroup {
  Tile buf;
  int64_t col0, cols, width, tiles;
};

/// Resident mode with all of lhsT in SBUF too: the output is computed column tile by column tile
/// (each rhs tile read once, streamed past every lhsT tile), so after the first tile each step
/// needs little new data. The last `transposedRows` rows of M are computed transposed. The first
/// lhsT and rhs tiles load piece by piece along K, the K tails (fewer than 128 rows) of each
/// operand whole in one DMA, the rest in doubling ranges of tiles.
void buildBothResident(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                       ResultWriter& write, isa::Dtype dtype, const MatmulSchedule& s) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t fullKt = K / kPart, tailRows = K % kPart, nTiles = ceilDiv(N, s.nTile);
  const int64_t rows = s.transposedRows, direct = M - rows, directTiles = ceilDiv(direct, kPart);
  // Transposed rows of at most one tile are lhsT's last tile; wider ones get their own.
  const bool ownTile = rows > kPart;
  const int64_t split = ownTile ? direct : M;
  const auto bodyBuf = [&](int64_t tiles, int64_t width, const char* name) {
    return fullKt > 0 ? b.sbuf({kPart, tiles, fullKt, width}, dtype, name) : Tile{};
  };
  std::vector<LhsGroup> groups;
  if (split > 0)
    groups.push_back(
        {bodyBuf(ceilDiv(split, kPart), kPart, "lhsT"), 0, split, kPart, ceilDiv(split, kPart)});
  if (ownTile) groups.push_back({bodyBuf(1, rows, "lhsT_t"), direct, rows, rows, 1});
  const Tile rhsBody = bodyBuf(nTiles, s.nTile, "rhs");
  const Tile lhsTail = tailRows > 0 ? b.sbuf({tailRows, M}, dtype, "lhsT_k_tail") : Tile{};
  const Tile rhsTail = tailRows > 0 ? b.sbuf({tailRows, N}, dtype, "rhs_k_tail") : Tile{};
  // Columns [c0, c0 + cols) of lhsT: tile `tile` of group `g` (offset `c0` inside it).
  const auto lhsColumns = [&](const LhsGroup& g, int64_t tile, int64_t c0, int64_t cols) {
    const int64_t col = g.col0 + tile * g.width + c0;
    KSplit out{fullKt > 0 ? g.buf.select(0, tile).slice(1, c0, c0 + cols) : Tile{},
               tailRows > 0 ? lhsTail.slice(0, col, col + cols) : Tile{}, fullKt};
    return out;
  };
  const auto rhsColumns = [&](int64_t nj, int64_t cols) {
    const int64_t col = nj * s.nTile;
    KSplit out{fullKt > 0 ? rhsBody.select(0, nj).slice(1, 0, cols) : Tile{},
               tailRows > 0 ? rhsTail.slice(0, col, col + cols) : Tile{}, fullKt};
    return out;
  };
  const BufferRing psums =
      BufferRing::psum(b, static_cast<int>(s.psumBuffers), {kPart, kFree}, isa::Dtype::Fp32, "acc");
  LoadQueues queues(s.loadQueues, s.scalarRhs, s.sideEngine, MatmulQueues(b.geometry()));
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };
  const auto rhsCols = [&](int64_t nj) {
    return std::pair{nj * s.nTile, std::min(N, (nj + 1) * s.nTile)};
  };
  const auto columnsOf = [&](const LhsGroup& g) { return lhsT.slice(1, g.col0, g.col0 + g.cols); };
  const LhsGroup& first = groups.front();
  const int64_t ms0 = std::min(first.width, first.cols);
  const auto [n0First, n1First] = rhsCols(0);
  // The K tail of each operand whole, on the side queues, once `kTailDelay` Sync loads have
  // followed the first tiles: a tail's few partitions are all one DMA engine's, and it holds that
  // engine while the first tiles' slice on it waits.
  bool tailsLoaded = tailRows == 0;
  int64_t tailsAfter = 0;
  const auto loadTails = [&](bool now) {
    if (tailsLoaded || (!now && queues.syncLoads() < tailsAfter)) return;
    b.setNote("load lhsT");
    b.dmaCopy(lhsTail, lhsT.slice(0, fullKt * kPart, K), queues.side());
    b.setNote("load rhs");
    b.dmaCopy(rhsTail, rhs.slice(0, fullKt * kPart, K), queues.side());
    tailsLoaded = true;
  };
  // The first tiles of both operands, K piece by K piece.
  for (const KPiece& piece : kPieces(K, s.loadChunks)) {
    if (piece.tail) continue;
    b.setNote("load lhsT");
    loadKPiece(b, columnsOf(first).slice(1, 0, ms0), first.buf.select(0, 0).slice(1, 0, ms0), piece,
               queues.lhs());
    b.setNote("load rhs");
    loadKPiece(b, rhs.slice(1, n0First, n1First),
               rhsBody.select(0, 0).slice(1, 0, n1First - n0First), piece, queues.rhs());
  }
  tailsAfter = queues.syncLoads() + s.kTailDelay;
  // Every load is emitted before the compute (nothing is reused, so nothing waits): the rest of
  // lhsT first (the first column pass needs it), then the rest of rhs.
  for (const LhsGroup& g : groups) {
    const bool isFirst = &g == &first;
    for (const auto& [t0, t1] :
         isFirst ? doublingRanges(g.tiles) : std::vector<std::pair<int64_t, int64_t>>{{0, 1}}) {
      loadTails(false);
      b.setNote("load lhsT");
      loadColumnTiles(b, columnsOf(g), g.buf, g.width, t0, t1, lhsQueue);
    }
  }
  for (const auto& [t0, t1] : doublingRanges(nTiles)) {
    loadTails(false);
    b.setNote("load rhs");
    loadColumnTiles(b, rhs, rhsBody, s.nTile, t0, t1, rhsQueue);
  }
  loadTails(true);
  int64_t tileIndex = 0;
  for (int64_t nj = 0; nj < nTiles; ++nj) {
    const auto [n0, n1] = rhsCols(nj);
    const int64_t ns = n1 - n0;
    const KSplit rhsPass = rhsColumns(nj, ns);
    // The transposed rows go last in the first pass (their lhsT tile loads last) and first in
    // the others, so the kernel ends on a direct tile's wide store.
    const auto tail = [&] {
      const KSplit lhsRows =
          ownTile ? lhsColumns(groups.back(), 0, 0, rows) : lhsColumns(first, directTiles, 0, rows);
      buildTransposedTail(b, lhsRows, rhsPass, rows, ns, direct, n0, psums, tileIndex, write);
    };
    if (rows > 0 && nj > 0) tail();
    write.storeTiles = ns < s.nTile ? s.narrowStoreTiles : s.storeTiles;
    for (int64_t mi = 0; mi < directTiles; ++mi) {
      const int64_t m0 = mi * kPart, ms = std::min(kPart, direct - m0);
      const KSplit lhsTile = lhsColumns(first, mi, 0, ms);
      const Tile ps = corner(psums[tileIndex++], ms, ns);
      b.setNote("matmul");
      for (int64_t k = 0; k < lhsTile.tiles(); ++k) b.matmul(ps, lhsTile[k], rhsPass[k], k > 0);
      write(ps, m0, ms, n0, ns);
    }
    if (rows > 0 && nj == 0) tail();
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
  const BufferRing rhsBuf =
      BufferRing::sbuf(b, whole ? 1 : 2, {kPart, kt, groupCols}, dtype, "rhs");
  const BufferRing lhsBuf =
      BufferRing::sbuf(b, static_cast<int>(s.loadBuffers), {kPart, kt, kPart}, dtype, "lhsT");
  const BufferRing psums =
      BufferRing::psum(b, static_cast<int>(s.psumBuffers), {kPart, kFree}, isa::Dtype::Fp32, "acc");
  LoadQueues queues(s.loadQueues, s.scalarRhs, s.sideEngine, MatmulQueues(b.geometry()));
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };

  // Work items: (rhs group, 128-row M tile); item i loads into lhsT buffer i % loadBuffers.
  const int64_t mTiles = ceilDiv(M, kPart), groups = ceilDiv(N, groupCols);
  const auto groupStart = [&](int64_t item) { return item / mTiles * groupCols; };
  const auto groupSize = [&](int64_t item) { return std::min(groupCols, N - groupStart(item)); };
  const auto rhsTiles = [&](int64_t item) {
    return rhsBuf[item / mTiles].slice(1, 0, groupSize(item));
  };
  const auto lhsTile = [&](int64_t item) {
    const int64_t m0 = item % mTiles * kPart;
    return lhsBuf[item].slice(1, 0, std::min(kPart, M - m0));
  };
  const auto load = [&](int64_t item, int) {
    const int64_t g0 = groupStart(item), gs = groupSize(item), m0 = item % mTiles * kPart;
    const Tile lb = lhsTile(item), rb = rhsTiles(item);
    const HbmView lhsView = lhsT.slice(1, m0, m0 + lb.size(1));
    const auto rhsView = [&](int64_t n0) {
      return rhs.slice(1, g0 + n0, g0 + std::min(gs, n0 + kFree));
    };
    const auto rhsTile = [&](int64_t n0) { return rb.slice(1, n0, std::min(gs, n0 + kFree)); };
    b.setNote("load lhsT");
    if (m0 > 0) {
      loadKRows(b, lhsView, lb, s.loadChunks, lhsQueue);
      return;
    }
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
  };
  int64_t tileIndex = 0;
  const auto compute = [&](int64_t item, int) {
    const int64_t g0 = groupStart(item), gs = groupSize(item), m0 = item % mTiles * kPart;
    const Tile lb = lhsTile(item), rb = rhsTiles(item);
    const int64_t ms = lb.size(1);
    for (int64_t n0 = 0; n0 < gs; n0 += kFree) {
      const int64_t ns = std::min(kFree, gs - n0);
      const Tile ps = corner(psums[tileIndex++], ms, ns);
      b.setNote("matmul");
      for (int64_t k = 0; k < kt; ++k) {
        const int32_t ks = static_cast<int32_t>(std::min(kPart, K - k * kPart));
        b.matmul(ps, lb.partitionSlice(0, ks).select(0, k),
                 rb.partitionSlice(0, ks).select(0, k).slice(0, n0, n0 + ns), k > 0);
      }
      write(ps, m0, ms, g0 + n0, ns);
    }
  };
  runPipelined(groups * mTiles, lhsBuf.size(), load, compute);
}

/// K-tile counts of the chunks of one block: the first block ramps up 1, 2, 4, ... to kChunk so
/// that its first matmuls wait for a small load, later blocks (prefetched) use kChunk.
std::vector<int64_t> chunkSizes(int64_t kt, int64_t kChunk, bool ramp) {
  std::vector<int64_t> sizes;
  int64_t size = ramp ? 1 : kChunk;
  for (int64_t done = 0; done < kt; done += sizes.back()) {
    sizes.push_back(std::min({size, kChunk, kt - done}));
    size = std::min(size * 2, kChunk);
  }
  return sizes;
}

void buildKBlocked(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, ResultWriter& write,
                   isa::Dtype dtype, const MatmulSchedule& s) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = ceilDiv(K, kPart);
  const int64_t blockRows = std::min(M, s.blockM * kPart);
  const int64_t blockCols = std::min(N, s.blockN * kFree);
  const BufferRing lhsBuf = BufferRing::sbuf(b, static_cast<int>(s.loadBuffers),
                                             {kPart, s.kChunk, blockRows}, dtype, "lhsT");
  const BufferRing rhsBuf = BufferRing::sbuf(b, static_cast<int>(s.loadBuffers),
                                             {kPart, s.kChunk, blockCols}, dtype, "rhs");
  // Accumulators take the banks in turn, so a block's first tiles reuse the banks the previous
  // block evicts first.
  const BufferRing psums =
      BufferRing::psum(b, static_cast<int>(s.psumBuffers), {kPart, kFree}, isa::Dtype::Fp32, "acc");
  LoadQueues queues(s.loadQueues, s.scalarRhs, s.sideEngine, MatmulQueues(b.geometry()));
  const auto lhsQueue = [&] { return queues.lhs(); };
  const auto rhsQueue = [&] { return queues.rhs(); };

  // Work items: the chunks of every block, in order; chunk i loads into buffer i % loadBuffers.
  struct Chunk {
    int64_t m0, n0, rows, cols;  ///< the block
    int64_t c0, tiles;           ///< K tiles [c0, c0 + tiles)
  };
  std::vector<Chunk> chunks;
  for (int64_t m0 = 0; m0 < M; m0 += blockRows)
    for (int64_t n0 = 0; n0 < N; n0 += blockCols) {
      const int64_t rows = std::min(blockRows, M - m0), cols = std::min(blockCols, N - n0);
      int64_t c0 = 0;
      for (int64_t tiles : chunkSizes(kt, s.kChunk, chunks.empty() && s.rampChunks)) {
        chunks.push_back({m0, n0, rows, cols, c0, tiles});
        c0 += tiles;
      }
    }
  const auto lhsChunk = [&](int64_t i) {
    return lhsBuf[i].slice(0, 0, chunks[i].tiles).slice(1, 0, chunks[i].rows);
  };
  const auto rhsChunk = [&](int64_t i) {
    return rhsBuf[i].slice(0, 0, chunks[i].tiles).slice(1, 0, chunks[i].cols);
  };
  const auto load = [&](int64_t i, int) {
    const Chunk& c = chunks[i];
    const int64_t k0 = c.c0 * kPart, k1 = std::min(K, (c.c0 + c.tiles) * kPart);
    b.setNote("load lhsT");
    loadKRows(b, lhsT.slice(0, k0, k1).slice(1, c.m0, c.m0 + c.rows), lhsChunk(i), 1, lhsQueue);
    b.setNote("load rhs");
    loadKRows(b, rhs.slice(0, k0, k1).slice(1, c.n0, c.n0 + c.cols), rhsChunk(i), 1, rhsQueue);
  };
  // The current block's accumulators, [mi * nTiles + ni].
  std::vector<Tile> acc;
  int64_t bank = 0;
  const auto compute = [&](int64_t i, int) {
    const Chunk& c = chunks[i];
    const int64_t mTiles = ceilDiv(c.rows, kPart), nTiles = ceilDiv(c.cols, kFree);
    const auto rowsOf = [&](int64_t mi) { return std::min(kPart, c.rows - mi * kPart); };
    const auto colsOf = [&](int64_t ni) { return std::min(kFree, c.cols - ni * kFree); };
    if (c.c0 == 0) {
      acc.clear();
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t ni = 0; ni < nTiles; ++ni)
          acc.push_back(corner(psums[bank++], rowsOf(mi), colsOf(ni)));
    }
    const Tile lb = lhsChunk(i), rb = rhsChunk(i);
    b.setNote("matmul");
    for (int64_t t = 0; t < c.tiles; ++t) {
      const int32_t ks = static_cast<int32_t>(std::min(kPart, K - (c.c0 + t) * kPart));
      for (int64_t mi = 0; mi < mTiles; ++mi) {
        const Tile stationary =
            lb.partitionSlice(0, ks).select(0, t).slice(0, mi * kPart, mi * kPart + rowsOf(mi));
        for (int64_t ni = 0; ni < nTiles; ++ni)
          b.matmul(
              acc[mi * nTiles + ni], stationary,
              rb.partitionSlice(0, ks).select(0, t).slice(0, ni * kFree, ni * kFree + colsOf(ni)),
              c.c0 + t > 0);
      }
    }
    if (c.c0 + c.tiles < kt) return;
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni)
        write(acc[mi * nTiles + ni], c.m0 + mi * kPart, rowsOf(mi), c.n0 + ni * kFree, colsOf(ni));
  };
  runPipelined(static_cast<int64_t>(chunks.size()), lhsBuf.size(), load, compute);
}

}  // namespace

void buildMatmul(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, const HbmView& out,
                 isa::Dtype dtype, const MatmulSchedule& schedule) {
  const MatmulQueues layout(b.geometry());
  std::vector<int32_t> storeQueues;
  const int64_t queues = b.geometry().dmaQueues;  // the last store_queues of them
  for (int64_t q = std::max<int64_t>(0, queues - schedule.storeQueues); q < queues; ++q)
    storeQueues.push_back(static_cast<int32_t>(q));
  b.setDmaQueues(storeQueues, isa::Engine::GpSimd);
  ResultWriter write{b,
                     out,
                     b.sbuf({kPart, schedule.outBuffers, kFree}, isa::Dtype::Fp32, "out"),
                     PsumEvictor(b, evictEngines(schedule.evict)),
                     schedule.syncStores,
                     QueueCycle::span(layout.syncStores(), layout.unit),
                     schedule.storeTiles};
  if (const int64_t rows = schedule.transposedRows; rows > 0) {
    write.tailEvicted =
        BufferRing::sbuf(b, 2, {kPart, std::max(kPart, rows)}, isa::Dtype::Fp32, "out_tail_t");
    write.tailRows = BufferRing::sbuf(b, static_cast<int>(2 * ceilDiv(rows, kPart)), {kPart, kPart},
                                      isa::Dtype::Fp32, "out_tail");
  }
  if (schedule.mode == MatmulMode::BothResident) {
    buildBothResident(b, lhsT, rhs, write, dtype, schedule);
  } else if (schedule.mode == MatmulMode::Resident) {
    buildResident(b, lhsT, rhs, write, dtype, schedule);
  } else {
    buildKBlocked(b, lhsT, rhs, write, dtype, schedule);
  }
  write.finish();
}

}  // namespace neuronsim::kernels
