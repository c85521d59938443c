// dw by the Rows method: partitions hold an (h, w) box of dy positions and depth runs along the
// free axis, so one PE transpose of x per (kh, kw) shift and input depth serves every kd tap.
// Transposes fill PSUM banks and each bank is evicted by one copy (Vector and Scalar in turn).
// The PE holds xT (one matmul per tap, or per shift and group of dy depths when depth-packed) or
// dyT (one matmul per shift covering its kd taps).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/builder/pipeline.h"
#include "kernels/conv/conv_bwd_build.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_window.h"

namespace neuronsim::kernels {

namespace {
constexpr int kBuffers = 2;
constexpr int64_t kQuadrant = isa::kQuadrantPartitions;
}  // namespace

/// Emits the passes of a DwRowsPlan: per C_out slab and pass, every dy chunk and its x window.
class DwRowsEmitter {
 public:
  DwRowsEmitter(KernelBuilder& b, const ConvCore& fwd, const DwRowsPlan& plan, isa::Dtype dtype,
                const HbmView& dy, const HbmView& x, const HbmView& dw,
                const std::optional<HbmView>& db)
      : b_(b),
        fwd_(fwd),
        plan_(plan),
        dtype_(dtype),
        dy_(dy),
        x_(x),
        dw_(dw),
        db_(db),
        evict_(b, plan.evictEngines) {}

  /// Allocates the tiles (no instructions yet: see prime).
  void begin() {
    allocate();
    chunks_ = plan_.shareKh ? bandList() : chunkList(fwd_, plan_.chunk);
    for (int64_t co0 = 0; co0 < fwd_.cout; co0 += plan_.coWidth)
      for (size_t p = 0; p < plan_.passes.size(); ++p)
        for (size_t c = 0; c < chunks_.size(); ++c)
          steps_.push_back({co0, std::min(plan_.coWidth, fwd_.cout - co0), p, &chunks_[c], c == 0,
                            c + 1 == chunks_.size()});
    pipeline_.emplace(
        steps(), kBuffers,
        [this](int64_t item, int set) { load(steps_[static_cast<size_t>(item)], set); },
        [this](int64_t item, int set) {
          const Step& s = steps_[static_cast<size_t>(item)];
          process(s, set);
          if (s.lastChunk) store(s);
        });
  }

  /// Emits the tiles' fills and the first step's loads (once; emitThrough calls it first).
  void prime() {
    if (primed_) return;
    primed_ = true;
    fill();
    pipeline_->prime();
  }

  int64_t steps() const { return static_cast<int64_t>(steps_.size()); }

  /// Emits steps up to (not including) `end`, each after the next one's loads.
  void emitThrough(int64_t end) {
    if (end > 0) prime();
    if (pipeline_->next() < std::min(end, steps())) allocatePsum();
    pipeline_->emitThrough(end);
  }

  /// Emits the remaining steps and releases the tiles.
  void finish() {
    prime();
    emitThrough(steps());
    banks_.release(b_);
    for (const Tile& t : accs_) b_.release(t);
    if (db_ && !plan_.dbInAccBank && !plan_.dbOnGpSimd) b_.release(dbAcc_);
    releaseSbuf();
  }

  /// Releases the SBUF tiles of a program that emitted nothing (no PSUM taken yet).
  void abandon() { releaseSbuf(); }

 private:
  struct Step {
    int64_t co0, cw;
    size_t pass;
    const Chunk* chunk;
    bool firstChunk, lastChunk;
  };
  /// A transposed x set of a pass: shift (kh, kw) and C_in tile.
  struct XSet {
    int64_t kh, kw, ciTile;
  };
  /// Transposes filling one PSUM bank and the SBUF rows its copy lands in.
  struct BankJob {
    std::vector<Tile> srcs;
    Tile dst;
    int64_t cols;        // PSUM columns per transpose
    int64_t groupParts;  // > 0: dst [positions; n, group, ci] of groups groupParts apart
  };

  const std::vector<DwUnit>& units(const Step& s) const { return plan_.passes[s.pass]; }
  bool packed() const { return plan_.depthGroup > 1; }
  bool grouped() const { return plan_.xGroups > 1; }
  bool dyGrouped() const { return plan_.dyGroups > 1; }
  int64_t ciCount(int64_t t) const { return std::min(plan_.parts, fwd_.cin - t * plan_.parts); }
  Int3 tapOf(int64_t tap) const {
    const Int3& k = fwd_.taps;
    return {tap / (k[1] * k[2]), tap / k[2] % k[1], tap % k[2]};
  }

  /// The pass's x sets in first-use order, and each unit's set index.
  std::vector<XSet> setsOf(const std::vector<DwUnit>& pass, std::vector<int64_t>* setOfUnit) const {
    std::vector<XSet> sets;
    for (const DwUnit& u : pass) {
      const Int3 k = tapOf(u.tap);
      size_t i = 0;
      while (i < sets.size() &&
             (sets[i].kh != k[1] || sets[i].kw != k[2] || sets[i].ciTile != u.ciTile))
        ++i;
      if (i == sets.size()) sets.push_back({k[1], k[2], u.ciTile});
      if (setOfUnit) setOfUnit->push_back(static_cast<int64_t>(i));
    }
    return sets;
  }

  void allocate() {
    const Int3& w = plan_.window;
    const Int3& c = plan_.chunk;
    const int64_t coParts = std::min(plan_.coWidth, plan_.parts);
    const int64_t units = plan_.passUnits;
    // shareKh: bands outermost, so their loads touch disjoint byte ranges (no false ordering)
    const int64_t bands = plan_.shareKh ? plan_.boxH : 1;
    std::vector<int64_t> window{plan_.ciParts, plan_.ciTiles, w[0], w[1] / bands, w[2]};
    if (grouped()) window = {plan_.parts, 1, plan_.xGroupDepths, w[1] / bands, w[2]};
    std::vector<int64_t> dy{coParts, plan_.coSub, c[0], c[1], c[2]};
    if (dyGrouped()) dy = {plan_.parts, 1, plan_.dyGroupDepths, c[1], c[2]};
    if (plan_.shareKh) {
      window.insert(window.begin() + 2, bands);
      dy.insert(dy.begin() + 2, bands);
    }
    windows_ = BufferRing::sbuf(b_, kBuffers, window, dtype_, "x_window");
    if (plan_.stageX) stages_ = BufferRing::sbuf(b_, kBuffers, window, dtype_, "x_stage");
    if (!plan_.dyByDma) dyTiles_ = BufferRing::sbuf(b_, kBuffers, dy, dtype_, "dy");
    std::vector<int64_t> dyT{plan_.parts, std::max(c[0], plan_.dyGroups * plan_.dyGroupDepths),
                             plan_.coWidth};
    // rowPairs: one tile, so a box pair is one view
    if (plan_.rowPairs) dyT.insert(dyT.begin() + 1, plan_.dyTBoxes);
    dyT_ = BufferRing::sbuf(b_, plan_.rowPairs ? 1 : static_cast<int>(plan_.dyTBoxes), dyT, dtype_,
                            "dyT");
    if (plan_.shareKh) {
      xT_ = BufferRing::sbuf(
          b_, 1,
          {plan_.parts, plan_.xtRows, plan_.xtSets,
           std::max(w[0], plan_.xGroupFirst + plan_.xGroups * plan_.xGroupDepths), plan_.ciParts},
          dtype_, "xT_rows");
    } else {
      xT_ = BufferRing::sbuf(b_, kBuffers, {plan_.parts, plan_.xtSets, w[0], plan_.ciParts}, dtype_,
                             "xT");
    }
    // byHalves: tap kd's sums on partitions kd x ci (the same bytes per partition)
    const int64_t outParts =
        packed() && byHalves() ? plan_.depthSlots * plan_.ciParts : plan_.ciParts;
    outs_ = BufferRing::sbuf(b_, kBuffers, {outParts, units, plan_.coWidth}, dw_.dtype(), "dw_out");
    if (plan_.dyStationary)
      evicted_ =
          BufferRing::sbuf(b_, kBuffers, {coParts, units, plan_.ciParts}, dw_.dtype(), "dw_co_ci");
    if (db_) {
      ones_ = b_.sbuf({plan_.parts, 1}, dtype_, "ones");
      dbOut_ = b_.sbuf({1, plan_.coWidth}, db_->dtype(), "db_out");
      if (plan_.dbOnGpSimd)
        dbRows_ = b_.sbuf(
            {plan_.dyGroups * plan_.dyGroupParts, plan_.boxH, plan_.dyGroupDepths, plan_.chunk[2]},
            isa::Dtype::Fp32, "db_rows");
      if (dbBlocks() > 1) {
        const int64_t rows = dbBlocks() * dbBlockParts();
        dbCol_ = b_.sbuf({rows, 1}, isa::Dtype::Fp32, "db_column");
        dbSelect_ = b_.sbuf({rows, fwd_.cout}, isa::Dtype::Fp32, "db_select");
        dbOutCol_ = b_.sbuf({fwd_.cout, 1}, db_->dtype(), "db_out_column");
      }
    }
    if (packed()) {
      accSb_ = b_.sbuf({accParts(), plan_.passUnits / fwd_.taps[0] + plan_.pairAccs,
                        plan_.accGroups, plan_.coWidth},
                       isa::Dtype::Fp32, "dw_acc_evicted");
      identity_ = b_.sbuf({plan_.parts, plan_.parts}, isa::Dtype::Fp32, "identity");
    }
  }

  /// dyT ring slot `ring` [positions; depths, co].
  Tile dyTOf(int ring) const { return plan_.rowPairs ? dyT_[0].select(0, ring) : dyT_[ring]; }

  int64_t accParts() const {
    return plan_.dyStationary ? std::min(plan_.coWidth, plan_.parts)
                              : plan_.depthSlots * plan_.ciParts;
  }

  /// The PSUM tiles (accumulators, db, transpose banks), allocated when the first step is
  /// emitted: a program primed beside another (OverlappedDw, tail) takes PSUM once it is done.
  void allocatePsum() {
    if (!accs_.empty()) return;
    const int64_t bankColumns = b_.geometry().psumBankBytes() / 4;
    for (int64_t i = 0; i < plan_.accBanks; ++i)
      accs_.push_back(
          b_.psum({plan_.parts, bankColumns}, isa::Dtype::Fp32, fmt::format("dw_acc_{}", i)));
    if (db_ && !plan_.dbOnGpSimd) {
      const int64_t lastSlot = (plan_.accsPerBank - 1) * plan_.accGroups * plan_.coWidth;
      // dbDepths() > 1: a column [depths x co, 1]; else a row [1, co]
      const auto rows = static_cast<int32_t>(dbDepths() > 1 ? dbDepths() * fwd_.cout : 1);
      const int64_t cols = dbDepths() > 1 ? 1 : plan_.coWidth;
      dbAcc_ = plan_.dbInAccBank
                   ? accs_.back().partitionSlice(0, rows).slice(0, lastSlot, lastSlot + cols)
                   : b_.psum({rows, bankColumns}, isa::Dtype::Fp32, "db_acc").slice(0, 0, cols);
    }
    banks_ = BufferRing::psum(b_, static_cast<int>(plan_.transposeBanks),
                              {plan_.parts, bankColumns}, isa::Dtype::Fp32, "transposed");
  }

  /// Zeroes what the loads of a grouped tile ([parts; 1, bands, group depths, rows, w]) never
  /// write but its transposes read: every group's partitions when `channels` leave some of them
  /// unloaded (one memset: an engine's time goes by elements per partition, not by partitions),
  /// else a group's depth slots past the `depths` loaded ones.
  void zeroUnloaded(const Tile& tile, int64_t groups, int64_t groupParts, int64_t channels,
                    int64_t groupDepths, int64_t depths) {
    if (channels < groupParts) {
      const auto parts = static_cast<int32_t>(groups * groupParts);
      b_.memset(tile.partitionSlice(0, parts).select(0, 0).merge(0, 3), 0.0f, isa::Engine::GpSimd);
      return;
    }
    for (int64_t g = 0; g < groups; ++g) {
      const Tile part = tile.partitionSlice(static_cast<int32_t>(g * groupParts),
                                            static_cast<int32_t>(groupParts))
                            .select(0, 0);
      const int64_t loaded = std::clamp<int64_t>(depths - g * groupDepths, 0, groupDepths);
      if (loaded < groupDepths)
        b_.memset(part.slice(1, loaded, groupDepths).merge(1, 3), 0.0f, isa::Engine::GpSimd);
    }
  }

  void releaseSbuf() {
    for (BufferRing* ring : {&windows_, &stages_, &dyTiles_, &dyT_, &xT_, &outs_, &evicted_})
      ring->release(b_);
    if (packed()) {
      b_.release(accSb_);
      b_.release(identity_);
    }
    if (db_)
      for (const Tile& t : {ones_, dbOut_}) b_.release(t);
    if (db_ && dbBlocks() > 1)
      for (const Tile& t : {dbCol_, dbSelect_, dbOutCol_}) b_.release(t);
    if (db_ && plan_.dbOnGpSimd) b_.release(dbRows_);
  }

  /// The constant tiles: zeroed grouped windows, the ones column (db), the selection identity.
  void fill() {
    b_.setNote("dw fill");
    // grouped: partitions past C_in and depths past the window's are transposed, never loaded
    const auto [xLo, xHi] = xDepths(chunks_[0]);
    for (int i = 0; i < kBuffers && grouped(); ++i)
      zeroUnloaded(windows_[i], plan_.xGroups, plan_.xGroupParts, plan_.ciParts, plan_.xGroupDepths,
                   xHi - xLo);
    // grouped: the padding depths of xT are never transposed
    const int64_t xtDepths = xT_[0].size(2);
    const int64_t xtEnd = std::min(xtDepths, xLo + plan_.xGroups * plan_.xGroupDepths);
    for (int64_t r = 0; r < plan_.xtRows && grouped(); ++r)
      for (const auto& [d0, d1] : {std::pair{int64_t{0}, xLo}, std::pair{xtEnd, xtDepths}})
        if (d0 < d1)
          b_.memset(xT_[0].select(0, r).slice(1, d0, d1).merge(1, 2), 0.0f, isa::Engine::GpSimd);
    // dy grouped: partitions past C_out and depths past the chunk's, as the x windows
    for (int i = 0; i < kBuffers && dyGrouped(); ++i)
      zeroUnloaded(dyTiles_[i], plan_.dyGroups, plan_.dyGroupParts,
                   std::min(plan_.coWidth, plan_.parts), plan_.dyGroupDepths, plan_.chunk[0]);
    if (db_) b_.memset(ones_, 1.0f, isa::Engine::GpSimd);
    if (packed()) {
      b_.memset(identity_, 1.0f, isa::Engine::GpSimd);
      b_.affineSelect(identity_, identity_, isa::Affine{{{-1, plan_.parts}}, 0, 1},
                      isa::AluOp::IsEqual, 0.0f);
    }
    if (db_ && dbBlocks() > 1) {  // dbSelect_[p, co] = (p mod dbBlockParts() == co)
      const int64_t co = fwd_.cout, step = dbBlockParts();
      const auto rows = static_cast<int32_t>(dbBlocks() * step);
      const Tile id = identity_.partitionSlice(0, rows);
      b_.tensorCopy(dbSelect_, id.slice(0, 0, co), isa::Engine::GpSimd);
      for (int64_t k = 1; k < dbBlocks(); ++k)
        b_.tensorTensor(dbSelect_, dbSelect_, id.slice(0, k * step, k * step + co), isa::AluOp::Add,
                        isa::Engine::GpSimd);
    }
    if (db_ && plan_.dbOnGpSimd) b_.memset(dbRows_, 0.0f, isa::Engine::GpSimd);
  }

  /// Accumulators of units [i, i + n) of a pass inside their bank: [cs; n, cw], or [cw; n, cs]
  /// with dy stationary.
  Tile acc(size_t i, int64_t cs, int64_t cw, int64_t n = 1) const {
    const int64_t bank = static_cast<int64_t>(i) / plan_.accsPerBank;
    const int64_t columns = plan_.dyStationary ? plan_.ciParts : plan_.coWidth;
    const int64_t first = static_cast<int64_t>(i) % plan_.accsPerBank * columns;
    const int64_t parts = plan_.dyStationary ? cw : cs;
    return accs_[bank]
        .partitionSlice(0, static_cast<int32_t>(parts))
        .slice(0, first, first + n * columns)
        .reshape({n, columns})
        .slice(1, 0, plan_.dyStationary ? cs : cw);
  }

  /// Depth-packed accumulator `k` of a pass: [slots x ci; groups, cw] of its [depthSlots x ci,
  /// accGroups x coWidth] region.
  Tile packedAcc(int64_t k, int64_t slots, int64_t groups, int64_t cw) const {
    const int64_t width = plan_.accGroups * plan_.coWidth;
    const int64_t first = k % plan_.accsPerBank * width;
    return accs_[k / plan_.accsPerBank]
        .partitionSlice(0, static_cast<int32_t>(slots * plan_.ciParts))
        .slice(0, first, first + width)
        .reshape({plan_.accGroups, plan_.coWidth})
        .slice(0, 0, groups)
        .slice(1, 0, cw);
  }

  void load(const Step& s, int slot) {
    b_.setNote("dw load");
    const Chunk& chunk = *s.chunk;
    std::vector<bool> needed(static_cast<size_t>(plan_.ciTiles), false);
    for (const DwUnit& u : units(s)) needed[static_cast<size_t>(u.ciTile)] = true;
    const int64_t paddedRows = windowExtent(fwd_, 1, fwd_.out[1]);
    for (int64_t t = 0; t < plan_.ciTiles; ++t) {
      if (!needed[static_cast<size_t>(t)]) continue;
      const int32_t cs = static_cast<int32_t>(ciCount(t));
      std::optional<Tile> stage;
      if (plan_.stageX) stage = stages_[slot].partitionSlice(0, cs).select(0, t);
      const Tile window = windows_[slot].partitionSlice(0, cs).select(0, t);
      if (!plan_.shareKh) {
        loadWindowPieces(window, stage, t, chunk, false);
        continue;
      }
      // band r: padded rows from r x bandRows_ + the chunk's first band row
      for (int64_t r = 0; r < plan_.boxH; ++r) {
        Chunk band = chunk;
        band.origin[1] = r * bandRows_ + chunk.origin[1];
        band.extent[1] = std::min(chunk.extent[1], paddedRows - band.origin[1]);
        if (band.extent[1] <= 0) continue;
        const int64_t rows = band.extent[1];
        std::optional<Tile> stageBand;
        if (stage) stageBand = stage->select(0, r).slice(1, 0, rows);
        if (grouped()) {
          loadWindowGroups(windows_[slot].select(0, t).select(0, r).slice(1, 0, rows), band);
        } else {
          loadWindowPieces(window.select(0, r).slice(1, 0, rows), stageBand, t, band, true);
        }
      }
    }
    if (plan_.dyByDma) return;
    if (loadGroupedDy(s, slot)) return;
    for (int64_t r = 0; r < (plan_.shareKh ? plan_.boxH : 1); ++r) {
      Chunk band = chunk;
      Tile tile = dyTiles_[slot];
      if (plan_.shareKh) {
        const auto [b0, b1] = boxRows(chunk);
        band.origin[1] = r * bandRows_ + b0;
        band.extent[1] = std::min(b1 - b0, fwd_.out[1] - band.origin[1]);
        if (band.extent[1] <= 0) continue;
        tile = tile.select(1, r);
      }
      const Int3& e = band.extent;
      if (dyGrouped()) {  // depths [g x dyGroupDepths, + dyGroupDepths) on partition group g
        for (int64_t g = 0; g * plan_.dyGroupDepths < e[0]; ++g) {
          const int64_t d0 = g * plan_.dyGroupDepths;
          const int64_t d1 = std::min(e[0], d0 + plan_.dyGroupDepths);
          Chunk slab = band;
          slab.origin[0] += d0;
          slab.extent[0] = d1 - d0;
          loadChannelChunk(b_, dy_, slab, s.co0, s.cw,
                           tile.partitionSlice(static_cast<int32_t>(g * plan_.dyGroupParts),
                                               static_cast<int32_t>(s.cw))
                               .slice(1, 0, d1 - d0)
                               .slice(2, 0, e[1]));
        }
        continue;
      }
      const int64_t pieces = loadPieces(s.cw * e[0] * e[1] * e[2], e[0]);
      for (int64_t i = 0; i < pieces; ++i) {
        const int64_t d0 = e[0] * i / pieces, d1 = e[0] * (i + 1) / pieces;
        Chunk slab = band;
        slab.origin[0] += d0;
        slab.extent[0] = d1 - d0;
        loadChannelChunk(b_, dy_, slab, s.co0, s.cw, tile.slice(1, d0, d1).slice(2, 0, e[1]));
      }
    }
  }

  /// DwRowsPlan::dyBandsMerged: one DMA per partition group carries the chunk's rows of every
  /// band ([co; bands, group depths, rows, w]). False where the plan loads per band.
  bool loadGroupedDy(const Step& s, int slot) {
    if (!plan_.dyBandsMerged) return false;
    const Chunk& chunk = *s.chunk;
    const auto [b0, b1] = boxRows(chunk);
    const int64_t depth = chunk.extent[0];
    for (int64_t g = 0; g * plan_.dyGroupDepths < depth; ++g) {
      const int64_t d0 = g * plan_.dyGroupDepths;
      const int64_t d1 = std::min(depth, d0 + plan_.dyGroupDepths);
      const Tile dst = dyTiles_[slot]
                           .partitionSlice(static_cast<int32_t>(g * plan_.dyGroupParts),
                                           static_cast<int32_t>(s.cw))
                           .select(0, 0)
                           .slice(1, 0, d1 - d0)
                           .slice(2, 0, b1 - b0);
      b_.dmaCopy(dst, dy_.select(0, chunk.batch)
                          .slice(0, s.co0, s.co0 + s.cw)
                          .slice(1, chunk.origin[0] + d0, chunk.origin[0] + d1)
                          .split(2, {plan_.boxH, bandRows_})
                          .slice(3, b0, b1)
                          .permute({0, 2, 1, 3, 4}));
    }
    return true;
  }

  /// Loads the window of `chunk` (C_in tile `t`) into `window` [cs; d, h, w] in DMAs of about
  /// kDwLoadPieceBytes along its depth rows. `paddedRows`: chunk's H origin and extent are padded
  /// rows of the window itself, not dy rows.
  void loadWindowPieces(const Tile& window, const std::optional<Tile>& stage, int64_t t,
                        const Chunk& chunk, bool paddedRows) {
    // depth slabs [r0, r1): the window of a core with one D tap at D stride 1 (and one H tap
    // at H stride 1 when the rows are padded rows)
    ConvCore slabCore = fwd_;
    slabCore.stride[0] = slabCore.taps[0] = slabCore.dilation[0] = 1;
    if (paddedRows) slabCore.stride[1] = slabCore.taps[1] = slabCore.dilation[1] = 1;
    const int64_t rows = windowExtent(fwd_, 0, chunk.extent[0]);
    const int64_t pieces = loadPieces(
        window.partitions() * rows * window.size(1) * windowExtent(fwd_, 2, chunk.extent[2]), rows);
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t r0 = rows * i / pieces, r1 = rows * (i + 1) / pieces;
      Chunk slab = chunk;
      slab.origin[0] = chunk.origin[0] * fwd_.stride[0] + r0;
      slab.extent[0] = r1 - r0;
      std::optional<Tile> stageSlab;
      if (stage) stageSlab = stage->slice(0, r0, r1);
      loadWindow(b_, slabCore, x_, slab, t * plan_.parts, window.slice(0, r0, r1), stageSlab,
                 plan_.borderEngine);
    }
  }

  /// Grouped (DwRowsPlan::xGroups): the band window `window` [parts; group depths, rows, w] gets
  /// window depths xGroupFirst + [g x xGroupDepths, + xGroupDepths) of `band` that hold x on
  /// partition group g, one DMA each.
  void loadWindowGroups(const Tile& window, const Chunk& band) {
    ConvCore slabCore = fwd_;
    slabCore.stride[0] = slabCore.taps[0] = slabCore.dilation[0] = 1;
    slabCore.stride[1] = slabCore.taps[1] = slabCore.dilation[1] = 1;
    const auto cs = static_cast<int32_t>(plan_.ciParts);
    for (int64_t g = 0; g < plan_.xGroups; ++g) {
      const int64_t r0 = plan_.xGroupFirst + g * plan_.xGroupDepths;
      const int64_t r1 = std::min(xDepths(band).second, r0 + plan_.xGroupDepths);
      if (r0 >= r1) break;
      Chunk slab = band;
      slab.origin[0] = band.origin[0] * fwd_.stride[0] + r0;
      slab.extent[0] = r1 - r0;
      const Tile dst = window.partitionSlice(static_cast<int32_t>(g * plan_.xGroupParts), cs)
                           .slice(0, 0, r1 - r0);
      loadWindow(b_, slabCore, x_, slab, 0, dst, std::nullopt, plan_.borderEngine);
    }
  }

  /// DMAs a load of `elements` is cut into along its `depth` rows: about kDwLoadPieceBytes each,
  /// so large chunks spread over several DMA queues.
  int64_t loadPieces(int64_t elements, int64_t depth) const {
    const int64_t bytes = elements * isa::dtypeBytes(dtype_);
    return std::clamp<int64_t>(bytes / kDwLoadPieceBytes, 1, depth);
  }

  /// One partition box of a chunk: dy rows [h0, h0+bh) x columns [w0, w0+bw); with shareKh,
  /// rows h0 + r x bandRows_ for r < bh.
  struct Box {
    int64_t h0, w0, bh, bw;
    int32_t positions() const { return static_cast<int32_t>(bh * bw); }
  };

  /// The partition boxes of a step's chunk.
  std::vector<Box> boxesOf(const Step& s) const {
    const Int3& e = s.chunk->extent;
    std::vector<Box> boxes;
    if (plan_.shareKh) {
      const auto [b0, b1] = boxRows(*s.chunk);
      for (int64_t hh = b0; hh < b1; ++hh)
        boxes.push_back({hh, 0, groupsBelow(hh, fwd_.out[1]), e[2]});
    } else {
      for (int64_t h = 0; h < e[1]; h += plan_.boxH)
        for (int64_t w = 0; w < e[2]; w += plan_.boxW)
          boxes.push_back({h, w, std::min(plan_.boxH, e[1] - h), std::min(plan_.boxW, e[2] - w)});
    }
    return boxes;
  }

  /// Queues the transposes of step `n`'s first box (its loads are emitted: they run one step
  /// ahead), so TensorE transposes them beside this step's last matmuls instead of waiting
  /// for their evictions at the step's start. Not where the box restarts the xT row ring
  /// (shareKh, a band's first row: a new pass or batch element), whose rows this step's last
  /// box still reads.
  void prepareAhead(int64_t n) {
    if (n >= steps()) return;
    const Step& t = steps_[static_cast<size_t>(n)];
    const std::vector<Box> boxes = boxesOf(t);
    if (boxes.empty() || (plan_.shareKh && boxes[0].h0 == 0)) return;
    aheadRing_ = prepare(t, static_cast<int>(n % kBuffers), setsOf(units(t), nullptr), boxes[0]);
    aheadStep_ = n;
  }

  void process(const Step& s, int slot) {
    const std::vector<Box> boxes = boxesOf(s);
    const int64_t index = &s - steps_.data();
    std::vector<int64_t> setOfUnit;
    const std::vector<XSet> sets = setsOf(units(s), &setOfUnit);
    if (s.firstChunk) started_.assign(units(s).size() + static_cast<size_t>(plan_.pairAccs), false);
    if (s.firstChunk) edgeStarted_.assign(units(s).size(), false);
    if (db_ && s.pass == 0 && plan_.dbOnGpSimd) dbAdds(s, slot);
    int ring = aheadStep_ == index ? aheadRing_ : prepare(s, slot, sets, boxes[0]);
    aheadStep_ = -1;
    emitJobs(jobs_.size());
    for (size_t i = 0; i < boxes.size(); ++i) {
      const int current = ring;
      if (i + 1 < boxes.size()) {
        ring = prepare(s, slot, sets, boxes[i + 1]);
      } else {
        prepareAhead(index + 1);
      }
      multiply(s, setOfUnit, boxes[i], current);
      if (db_ && s.pass == 0 && !plan_.dbOnGpSimd) dbMatmuls(s, boxes[i], current);
      emitJobs(jobs_.size());
    }
    if (db_ && s.pass == 0 && s.lastChunk) storeDb(s);
  }

  /// dy depths one db matmul sums (dbDepths() x C_out stationary columns), 1: one per depth (a
  /// ones stationary). A matmul costs its moving columns but at least min(64, stationary
  /// columns) (I2): C 32's 4 depths take 64 cycles with dyT stationary, 128 with ones.
  int64_t dbDepths() const {
    if (!packed() || fwd_.cout != plan_.coWidth) return 1;
    return std::max<int64_t>(1, std::min(plan_.parts / fwd_.cout, plan_.chunk[0]));
  }

  /// db blocks of dbBlockParts() partitions the db column holds (1: a db row [1, co]): dy
  /// groups on GpSimd, else dbDepths()
  int64_t dbBlocks() const { return plan_.dbOnGpSimd ? plan_.dyGroups : dbDepths(); }
  int64_t dbBlockParts() const { return plan_.dbOnGpSimd ? plan_.dyGroupParts : fwd_.cout; }

  /// db on GpSimd: adds each dy row of the step's grouped dy tile ([parts; bands, group depths,
  /// W] of the bands holding that row) into dbRows_.
  void dbAdds(const Step& s, int slot) {
    b_.setNote("db add");
    const auto [b0, b1] = boxRows(*s.chunk);
    const Tile dy = dyTiles_[slot].partitionSlice(0, dbRows_.partitions()).select(0, 0);
    for (int64_t row = 0; row < b1 - b0; ++row) {
      const int64_t bands = groupsBelow(b0 + row, fwd_.out[1]);
      const Tile acc = dbRows_.slice(0, 0, bands);
      b_.tensorTensor(acc, acc, dy.slice(0, 0, bands).select(2, row), isa::AluOp::Add,
                      isa::Engine::GpSimd);
    }
  }

  /// db: per dbDepths() depths of the box, dyT [positions; depths, co] x ones [positions, 1] into
  /// the column [depths x co, 1]; or per depth ones x dyT into the row [1, co].
  void dbMatmuls(const Step& s, const Box& bx, int ring) {
    b_.setNote("db matmul");
    const int32_t np = bx.positions();
    const int64_t q = dbDepths();
    for (int64_t d = 0; d < s.chunk->extent[0] && q > 1; d += q) {
      const int64_t n = std::min(q, s.chunk->extent[0] - d);
      b_.matmul(dbAcc_.partitionSlice(0, static_cast<int32_t>(n * s.cw)),
                dyTOf(ring).partitionSlice(0, np).slice(0, d, d + n).slice(1, 0, s.cw),
                ones_.partitionSlice(0, np), dbStarted_);
      dbStarted_ = true;
    }
    for (int64_t d = 0; d < s.chunk->extent[0] && q == 1; ++d) {
      b_.matmul(dbAcc_.slice(0, 0, s.cw), ones_.partitionSlice(0, np),
                dyTOf(ring).partitionSlice(0, np).select(0, d).slice(0, 0, s.cw), dbStarted_);
      dbStarted_ = true;
    }
  }

  /// db: evicts the C_out slab's sums and stores them (triggered from Scalar).
  void storeDb(const Step& s) {
    b_.setNote("db store");
    if (dbBlocks() > 1) {  // the column's blocks added by a selection matmul
      if (plan_.dbOnGpSimd) {
        b_.tensorReduce(dbCol_, dbRows_, isa::AluOp::Add, 3);
      } else {
        copy(dbCol_, dbAcc_);
      }
      const Tile sum = banks_.next().partitionSlice(0, static_cast<int32_t>(s.cw)).slice(0, 0, 1);
      b_.matmul(sum, dbSelect_, dbCol_, false);
      copy(dbOutCol_, sum);
      b_.dmaCopy(db_->slice(0, s.co0, s.co0 + s.cw).reshape({s.cw, 1}), dbOutCol_,
                 DmaOptions{-1, isa::Engine::Sync});
      dbStarted_ = false;
      return;
    }
    copy(dbOut_.slice(0, 0, s.cw), dbAcc_.slice(0, 0, s.cw));
    b_.dmaCopy(db_->slice(0, s.co0, s.co0 + s.cw).reshape({1, s.cw}), dbOut_.slice(0, 0, s.cw),
               DmaOptions{-1, isa::Engine::Sync});
    dbStarted_ = false;
  }

  /// shareKh: the dy rows are boxH bands of bandRows_ rows. A chunk's h origin and extent count
  /// the padded x rows of each band it loads (no halo: a box's last kh rows come from the next
  /// chunk, so its boxes run `halo` rows behind, see boxRows); D and W are whole.
  std::vector<Chunk> bandList() {
    bandRows_ = isa::ceilDiv(fwd_.out[1], plan_.boxH);
    const int64_t rows = bandRows_ + rowHalo();
    std::vector<Chunk> list;
    for (int64_t n = 0; n < fwd_.batch; ++n)
      for (int64_t h = 0; h < rows; h += plan_.chunk[1])
        list.push_back(
            {n, {0, h, 0}, {fwd_.out[0], std::min(plan_.chunk[1], rows - h), fwd_.out[2]}});
    return list;
  }
  /// shareKh: the boxes (dy rows of each band) [b0, b1) of `chunk`: those whose last x row it
  /// loads.
  std::pair<int64_t, int64_t> boxRows(const Chunk& chunk) const {
    const int64_t h = chunk.origin[1] - rowHalo();
    return {std::max<int64_t>(0, h), std::min(bandRows_, h + chunk.extent[1])};
  }
  /// shareKh: bands r whose row r x bandRows_ + row lies below `rows`.
  int64_t groupsBelow(int64_t row, int64_t rows) const {
    return std::min(plan_.boxH, isa::ceilDiv(rows - row, bandRows_));
  }
  int64_t rowHalo() const { return (fwd_.taps[1] - 1) * fwd_.dilation[1]; }
  int64_t rowSlot(int64_t row) const { return (row + (plan_.rowPairs ? 1 : 0)) % plan_.xtRows; }

  /// shareKh: the distinct kw of a pass's sets, in first-use order.
  static std::vector<int64_t> kwsOf(const std::vector<XSet>& sets) {
    std::vector<int64_t> kws;
    for (const XSet& set : sets)
      if (std::find(kws.begin(), kws.end(), set.kw) == kws.end()) kws.push_back(set.kw);
    return kws;
  }
  static int64_t indexOf(const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) - v.begin();
  }

  /// shareKh: transposes the xT rows box `bx` is the first to need (all up to its last kh tap
  /// for the first box of a batch element, then one) for every kw of the pass. A row is read from
  /// this chunk's window band: the next chunk's boxes reuse the rows of this one's last.
  void prepareRows(const Step& s, int slot, const std::vector<XSet>& sets, const Box& bx) {
    const auto [lo, hi] = xDepths(*s.chunk);
    const int64_t paddedRows = windowExtent(fwd_, 1, fwd_.out[1]);
    const int64_t width = s.chunk->extent[2];
    const std::vector<int64_t> kws = kwsOf(sets);
    const int64_t cs = ciCount(0);
    const Tile window = windows_[slot].partitionSlice(0, static_cast<int32_t>(cs)).select(0, 0);
    const int64_t first = bx.h0 == 0 ? 0 : bx.h0 + rowHalo();
    for (int64_t row = first; row <= bx.h0 + rowHalo(); ++row) {
      const int64_t groups = groupsBelow(row, paddedRows);
      const Tile rowTile = xT_[0].select(0, rowSlot(row));
      if (grouped()) {
        prepareGroupedRow(s, slot, kws, row, groups, rowTile);
        continue;
      }
      zeroPaddingDepths(rowTile, static_cast<size_t>(rowSlot(row)), lo, hi);
      for (size_t i = 0; i < kws.size(); ++i) {
        std::vector<Tile> srcs;
        for (int64_t dd = lo; dd < hi; ++dd)
          srcs.push_back(rowSource(window, *s.chunk, groups, dd, row, kws[i]));
        transposeRun(srcs, rowTile.partitionSlice(0, static_cast<int32_t>(groups * width))
                               .select(0, static_cast<int64_t>(i))
                               .slice(0, lo, hi)
                               .slice(1, 0, cs));
      }
    }
  }

  /// shareKh: window [partitions; bands, depths, rows, w] at depth `depth` and padded row `row`
  /// of its first `groups` bands, the W columns tap `kw` reads: [partitions; groups, width].
  Tile rowSource(const Tile& window, const Chunk& chunk, int64_t groups, int64_t depth, int64_t row,
                 int64_t kw) const {
    const int64_t w0 = kw * fwd_.dilation[2];
    return window.slice(0, 0, groups)
        .select(1, depth)
        .select(1, row - chunk.origin[1])
        .slice(1, w0, w0 + (chunk.extent[2] - 1) * fwd_.stride[2] + 1, fwd_.stride[2]);
  }

  /// Grouped: per kw, one transpose of every partition per group depth j gives xT of depths
  /// xGroupFirst + j + g x xGroupDepths (g < xGroups) into `rowTile` [positions; kw, depths, ci].
  /// Group slots past the last x depth are zero rows of the window, so they transpose to zeros;
  /// the padding depths before xGroupFirst keep the zeros of fill().
  void prepareGroupedRow(const Step& s, int slot, const std::vector<int64_t>& kws, int64_t row,
                         int64_t groups, const Tile& rowTile) {
    const int64_t cs = plan_.ciParts;
    const Tile window = windows_[slot].select(0, 0);
    const auto np = static_cast<int32_t>(groups * s.chunk->extent[2]);
    for (size_t i = 0; i < kws.size(); ++i) {
      std::vector<Tile> srcs;
      for (int64_t j = 0; j < plan_.xGroupDepths; ++j)
        srcs.push_back(rowSource(window, *s.chunk, groups, j, row, kws[i]));
      const Tile dst =
          rowTile.partitionSlice(0, np)
              .select(0, static_cast<int64_t>(i))
              .slice(0, plan_.xGroupFirst, plan_.xGroupFirst + plan_.xGroups * plan_.xGroupDepths)
              .reshape({plan_.xGroups, plan_.xGroupDepths, cs})
              .permute({1, 0, 2});
      transposeRun(srcs, dst, plan_.xGroupParts);
    }
  }

  /// dy grouped: one transpose of every partition per group depth j gives dyT of depths
  /// j + g x dyGroupDepths (g < dyGroups) into dyT ring slot `ring` [positions; depths, co].
  void prepareGroupedDy(const Step& s, int slot, const Box& bx, int ring) {
    const Tile dy = dyTiles_[slot].select(0, 0).slice(0, 0, bx.bh);
    const int64_t row = bx.h0 - boxRows(*s.chunk).first;
    std::vector<Tile> srcs;
    for (int64_t j = 0; j < plan_.dyGroupDepths; ++j)
      srcs.push_back(dy.select(1, j).select(1, row));
    const Tile dst = dyTOf(ring)
                         .partitionSlice(0, bx.positions())
                         .slice(0, 0, plan_.dyGroups * plan_.dyGroupDepths)
                         .reshape({plan_.dyGroups, plan_.dyGroupDepths, plan_.coWidth})
                         .permute({1, 0, 2})
                         .slice(2, 0, s.cw);
    transposeRun(srcs, dst, plan_.dyGroupParts);
  }

  /// Transposes dy and the pass's x sets of `bx` into the next SBUF ring slot; returns it.
  int prepare(const Step& s, int slot, const std::vector<XSet>& sets, const Box& bx) {
    const int ring = static_cast<int>((plan_.rowPairs ? bx.h0 : dyT_.advance()) % plan_.dyTBoxes);
    const int32_t np = bx.positions();
    const Int3& e = s.chunk->extent;
    if (plan_.dyByDma) {
      const Chunk& c = *s.chunk;
      const HbmView dy = dy_.select(0, c.batch)
                             .slice(0, s.co0, s.co0 + s.cw)
                             .slice(2, c.origin[1] + bx.h0, c.origin[1] + bx.h0 + bx.bh)
                             .slice(3, c.origin[2] + bx.w0, c.origin[2] + bx.w0 + bx.bw);
      for (int64_t d = 0; d < e[0]; ++d)
        b_.dmaTranspose(dyTOf(ring).partitionSlice(0, np).select(0, d).slice(0, 0, s.cw),
                        dy.select(1, c.origin[0] + d));
    }
    if (dyGrouped()) prepareGroupedDy(s, slot, bx, ring);
    for (int64_t u = 0; u * plan_.parts < s.cw && !plan_.dyByDma && !dyGrouped(); ++u) {
      const int64_t cu = std::min(plan_.parts, s.cw - u * plan_.parts);
      const Tile dy = dyTiles_[slot].partitionSlice(0, static_cast<int32_t>(cu)).select(0, u);
      std::vector<Tile> srcs;
      for (int64_t d = 0; d < e[0]; ++d)
        srcs.push_back(
            plan_.shareKh
                ? dy.slice(0, 0, bx.bh).select(1, d).select(1, bx.h0 - boxRows(*s.chunk).first)
                : box(dy, {d, bx.h0, bx.w0}, {1, bx.bh, bx.bw}, {1, 1, 1}));
      transposeRun(srcs, dyTOf(ring)
                             .partitionSlice(0, np)
                             .slice(0, 0, e[0])
                             .slice(1, u * plan_.parts, u * plan_.parts + cu));
    }
    if (plan_.shareKh) {
      prepareRows(s, slot, sets, bx);
      return ring;
    }
    const auto [lo, hi] = xDepths(*s.chunk);
    if (packed()) zeroPaddingDepths(xT_[ring], static_cast<size_t>(ring), lo, hi);
    const Int3& st = fwd_.stride;
    const Int3& dil = fwd_.dilation;
    for (size_t i = 0; i < sets.size(); ++i) {
      const XSet& set = sets[i];
      const int64_t cs = ciCount(set.ciTile);
      const Tile window =
          windows_[slot].partitionSlice(0, static_cast<int32_t>(cs)).select(0, set.ciTile);
      std::vector<Tile> srcs;
      for (int64_t dd = lo; dd < hi; ++dd)
        srcs.push_back(box(window,
                           {dd, bx.h0 * st[1] + set.kh * dil[1], bx.w0 * st[2] + set.kw * dil[2]},
                           {1, bx.bh, bx.bw}, {1, st[1], st[2]}));
      transposeRun(srcs, xT_[ring]
                             .partitionSlice(0, np)
                             .select(0, static_cast<int64_t>(i))
                             .slice(0, lo, hi)
                             .slice(1, 0, cs));
    }
    return ring;
  }

  /// Depth-packed: a stationary spans padding depths too, so the depths of xT tile `xT`
  /// ([positions; sets, depths, ci], ring slot `key`) outside [lo, hi) hold zeros (memset when
  /// the slot's range changes).
  void zeroPaddingDepths(const Tile& xT, size_t key, int64_t lo, int64_t hi) {
    if (zeroedDepths_.size() <= key) zeroedDepths_.resize(key + 1, {-1, -1});
    if (zeroedDepths_[key] == std::pair{lo, hi}) return;
    b_.setNote("dw zero padding depths");
    if (lo > 0) b_.memset(xT.slice(1, 0, lo), 0.0f, isa::Engine::GpSimd);
    if (hi < plan_.window[0])
      b_.memset(xT.slice(1, hi, plan_.window[0]), 0.0f, isa::Engine::GpSimd);
    zeroedDepths_[key] = {lo, hi};
  }

  /// The window depth rows [lo, hi) of `chunk` that hold x (the others are padding zeros: their
  /// transposes and the matmuls reading them are skipped).
  std::pair<int64_t, int64_t> xDepths(const Chunk& chunk) const {
    const int64_t z0 = chunk.origin[0] * fwd_.stride[0] - fwd_.padLo[0];
    const int64_t depth = windowExtent(fwd_, 0, chunk.extent[0]);
    const int64_t lo = std::clamp<int64_t>(-z0, 0, depth);
    return {lo, std::clamp<int64_t>(fwd_.in[0] - z0, lo, depth)};
  }

  /// Queues the transposes of srcs[j] ([cols partitions, positions]) into row j of dst
  /// ([positions; n, cols]) as jobs of one PSUM bank each. `groupParts` > 0: srcs[j] has
  /// partition groups of groupParts, the first ci of each landing in dst [positions; n, group, ci].
  void transposeRun(const std::vector<Tile>& srcs, const Tile& dst, int64_t groupParts = 0) {
    const int64_t cols = groupParts > 0 ? srcs.front().partitions() : dst.size(1);
    const int64_t perBank = b_.geometry().psumBankBytes() / 4 / cols;
    for (size_t j0 = 0; j0 < srcs.size(); j0 += static_cast<size_t>(perBank)) {
      const size_t j1 = std::min(srcs.size(), j0 + static_cast<size_t>(perBank));
      jobs_.push_back({std::vector<Tile>(srcs.begin() + static_cast<std::ptrdiff_t>(j0),
                                         srcs.begin() + static_cast<std::ptrdiff_t>(j1)),
                       dst.slice(0, static_cast<int64_t>(j0), static_cast<int64_t>(j1)), cols,
                       groupParts});
    }
  }

  /// Emits the first `count` queued jobs: transposes into the next PSUM bank, one copy out.
  void emitJobs(size_t count) {
    count = std::min(count, jobs_.size());
    for (size_t i = 0; i < count; ++i) {
      b_.setNote("dw transpose");
      const BankJob& job = jobs_[i];
      const int64_t cols = job.cols;
      const Tile bank = banks_.next().partitionSlice(0, job.dst.partitions());
      for (size_t j = 0; j < job.srcs.size(); ++j) {
        const int64_t c0 = static_cast<int64_t>(j) * cols;
        b_.transpose(bank.slice(0, c0, c0 + cols), job.srcs[j]);
      }
      const int64_t n = static_cast<int64_t>(job.srcs.size());
      const Tile out = bank.slice(0, 0, n * cols).reshape({n, cols});
      if (job.groupParts == 0) {
        copy(job.dst, out);
      } else {
        copy(job.dst,
             out.reshape({n, cols / job.groupParts, job.groupParts}).slice(2, 0, job.dst.size(2)));
      }
    }
    jobs_.erase(jobs_.begin(), jobs_.begin() + static_cast<std::ptrdiff_t>(count));
  }

  /// Per depth of the chunk: the next share of queued transposes, then the depth's matmuls.
  void multiply(const Step& s, const std::vector<int64_t>& setOfUnit, const Box& bx, int ring) {
    if (packed()) return multiplyPacked(s, bx, ring);
    const int32_t np = bx.positions();
    const int64_t depth = s.chunk->extent[0];
    const auto perDepth =
        static_cast<size_t>(isa::ceilDiv(static_cast<int64_t>(jobs_.size()), depth));
    for (int64_t d = 0; d < depth; ++d) {
      emitJobs(perDepth);
      b_.setNote("dw matmul");
      const Tile dyT = dyTOf(ring).partitionSlice(0, np).select(0, d).slice(0, 0, s.cw);
      const Tile xT = xT_[ring].partitionSlice(0, np);
      if (plan_.dyStationary) {
        multiplyDyStationary(s, setOfUnit, d, dyT, xT);
      } else {
        multiplyXStationary(s, setOfUnit, d, dyT, xT);
      }
    }
  }

  /// Depth-packed, per group of depthGroup dy depths (the last may be short): the next share of
  /// queued transposes, then one matmul per x set, stationary xT [positions; slots, ci] and moving
  /// dyT [positions; group, co], into the set's accumulator (whose first group is whole).
  void multiplyPacked(const Step& s, const Box& bx, int ring) {
    if (plan_.rowReuse) return multiplyRows(s, bx, ring);
    if (plan_.rowPairs) return multiplyPaired(s, bx, ring);
    const int32_t np = bx.positions();
    forEachDepthGroup(s, [&](int64_t d0, int64_t g, const std::vector<XSet>& sets,
                             const std::vector<int64_t>& kws) {
      for (int64_t k = 0; k < static_cast<int64_t>(sets.size()); ++k) {
        const XSet& set = sets[static_cast<size_t>(k)];
        const Tile xT = plan_.shareKh ? xT_[0]
                                            .select(0, rowSlot(bx.h0 + set.kh * fwd_.dilation[1]))
                                            .select(0, indexOf(kws, set.kw))
                                      : xT_[ring].select(0, k);
        packedMatmuls(s, k, xT.partitionSlice(0, np), dyTOf(ring).partitionSlice(0, np), d0, g);
      }
    });
  }

  /// rowPairs: an even row hh with a next one of equal positions in the band runs its half of
  /// the pair (kh 0 and the centre against box hh), the next row the rest; other rows alone.
  void multiplyPaired(const Step& s, const Box& bx, int ring) {
    if (pairs(bx.h0)) return multiplyPair(s, bx, ring, false);
    if (bx.h0 % 2 == 1 && pairs(bx.h0 - 1)) return multiplyPair(s, bx, ring, true);
    multiplySingle(s, bx, ring);
  }

  bool pairs(int64_t hh) const {
    return hh % 2 == 0 && hh + 1 < bandRows_ &&
           groupsBelow(hh + 1, fwd_.out[1]) == groupsBelow(hh, fwd_.out[1]);
  }

  /// rowPairs: box `bx` alone, every set in today's form.
  void multiplySingle(const Step& s, const Box& bx, int ring) {
    forEachDepthGroup(s, [&](int64_t d0, int64_t g, const std::vector<XSet>& sets,
                             const std::vector<int64_t>& kws) {
      for (int64_t k = 0; k < static_cast<int64_t>(sets.size()); ++k) {
        const XSet& set = sets[static_cast<size_t>(k)];
        packedMatmuls(s, k, xRow(bx.h0 + set.kh, indexOf(kws, set.kw), bx.positions()),
                      dyTOf(ring).partitionSlice(0, bx.positions()), d0, g);
      }
    });
  }

  /// rowPairs: xT row `row` of kw index `i` on the first `np` partitions [positions; depths, ci].
  Tile xRow(int64_t row, int64_t i, int32_t np) const {
    return xT_[0].select(0, rowSlot(row)).select(0, i).partitionSlice(0, np);
  }

  /// rowPairs: accumulator indexes after the pass's `sets` sets: centre (box q, kw index i),
  /// edge (kd 2 when e, 4-slot or 2-slot matmul m).
  int64_t centreAcc(int64_t sets, int64_t q, int64_t i) const {
    return sets + q * fwd_.taps[2] + i;
  }
  int64_t edgeAcc(int64_t sets, int64_t e, int64_t m) const {
    return sets + 2 * fwd_.taps[2] + 2 * e + m;
  }

  /// rowPairs: box `bx` of the pair (hh, hh + 1) (dyT slot `ring`, box hh in slot hh mod
  /// dyTBoxes). First half (box hh): kh 0 in today's form and the centre x rows and depths;
  /// second (box hh + 1): kh 2 in today's form, the centre, and the edge depths against both.
  void multiplyPair(const Step& s, const Box& bx, int ring, bool second) {
    const int32_t np = bx.positions();
    const int64_t hh = bx.h0 - (second ? 1 : 0), q = second ? 1 : 0;
    const Tile xRows = xT_[0].partitionSlice(0, np).slice(0, rowSlot(hh + 1), rowSlot(hh + 1) + 2);
    const auto ra = hh % plan_.dyTBoxes;
    const Tile boxes = dyT_[0].partitionSlice(0, np).slice(0, ra, ra + 2);
    const Tile dyT = dyTOf(ring).partitionSlice(0, np);
    forEachDepthGroup(s, [&](int64_t d0, int64_t g, const std::vector<XSet>& sets,
                             const std::vector<int64_t>& kws) {
      const auto nsets = static_cast<int64_t>(sets.size());
      for (int64_t k = 0; k < nsets; ++k) {
        const XSet& set = sets[static_cast<size_t>(k)];
        if (set.kh == 2 * q)
          packedMatmuls(s, k, xRow(bx.h0 + set.kh, indexOf(kws, set.kw), np), dyT, d0, g);
      }
      for (int64_t i = 0; i < static_cast<int64_t>(kws.size()); ++i)
        accumulate(centreAcc(nsets, q, i), 4, g, s.cw, xRows.select(1, i).slice(1, d0 + 1, d0 + 3),
                   dyT.slice(0, d0, d0 + g).slice(1, 0, s.cw));
      const auto [lo, hi] = xDepths(*s.chunk);
      for (int64_t e = 0; e < g && second; ++e) {
        const int64_t depth = d0 + 3 * e;
        if (depth < lo || depth >= hi) continue;
        const Tile stationary = xRows.select(2, depth).permute({1, 0, 2});
        const Tile moving = boxes.select(1, d0 + e).slice(1, 0, s.cw);
        accumulate(edgeAcc(nsets, e, 0), 4, 2, s.cw, stationary.slice(0, 0, 2), moving);
        accumulate(edgeAcc(nsets, e, 1), 2, 2, s.cw, stationary.slice(0, 2, 3), moving);
      }
    });
  }

  /// Matmul into packed accumulator k ([slots x ci; groups, cw]), started on its first use.
  void accumulate(int64_t k, int64_t slots, int64_t groups, int64_t cw, const Tile& stationary,
                  const Tile& moving) {
    const auto ks = static_cast<size_t>(k);
    b_.matmul(packedAcc(k, slots, groups, cw), stationary, moving, started_[ks]);
    started_[ks] = true;
  }

  /// Set k's matmuls for dy depths [d0, d0 + g): stationary xT [positions; window depths, ci],
  /// moving dyT [positions; depths, co]. Depth pairs: the 2-slot matmul, then the edge taps
  /// whose x depth is not padding (kd 0 into block (0, 1), kd 2 into column group 2).
  void packedMatmuls(const Step& s, int64_t k, const Tile& xT, const Tile& dyT, int64_t d0,
                     int64_t g) {
    const auto ks = static_cast<size_t>(k);
    const Tile moving = dyT.slice(0, d0, d0 + g).slice(1, 0, s.cw);
    const int64_t first = plan_.depthPairs ? d0 + 1 : d0;
    const int64_t slots = plan_.depthPairs ? plan_.depthSlots : g + fwd_.taps[0] - 1;
    b_.matmul(packedAcc(k, slots, g, s.cw), xT.slice(0, first, first + slots), moving,
              started_[ks]);
    started_[ks] = true;
    if (!plan_.depthPairs) return;
    const auto [lo, hi] = xDepths(*s.chunk);
    const Tile edges = packedAcc(k, 1, plan_.accGroups, s.cw);  // partitions 0.. (A1)
    if (d0 >= lo && d0 < hi)
      b_.matmul(edges.select(0, 1), xT.select(0, d0), dyT.select(0, d0).slice(0, 0, s.cw), true);
    if (g == 2 && d0 + 3 >= lo && d0 + 3 < hi) {
      b_.matmul(edges.select(0, 2), xT.select(0, d0 + 3), dyT.select(0, d0 + 1).slice(0, 0, s.cw),
                edgeStarted_[ks]);
      edgeStarted_[ks] = true;
    }
  }

  /// Per group of depthGroup dy depths (the last may be short), after the next share of queued
  /// transposes: fn(first depth, depths, the step's x sets, their kws).
  template <class Fn>
  void forEachDepthGroup(const Step& s, Fn&& fn) {
    const int64_t depth = s.chunk->extent[0], group = plan_.depthGroup;
    const int64_t groups = isa::ceilDiv(depth, group);
    const std::vector<XSet> sets = setsOf(units(s), nullptr);
    const std::vector<int64_t> kws = kwsOf(sets);
    const auto perGroup =
        static_cast<size_t>(isa::ceilDiv(static_cast<int64_t>(jobs_.size()), groups));
    for (int64_t d0 = 0; d0 < depth; d0 += group) {
      emitJobs(perGroup);
      b_.setNote("dw matmul");
      const int64_t g = std::min(group, depth - d0);
      fn(d0, g, sets, kws);
    }
  }

  /// rowReuse: box `bx` (dyT ring slot `ring`) joins the boxes waiting for rows and xT row
  /// bx.h0 meets them; a band's last box also takes the rows after it (its last kh taps').
  void multiplyRows(const Step& s, const Box& bx, int ring) {
    waiting_.push_back({bx, ring});
    const int64_t last = bx.h0 == bandRows_ - 1 ? bx.h0 + rowHalo() : bx.h0;
    for (int64_t row = bx.h0; row <= last; ++row) multiplyRow(s, row);
    if (bx.h0 == bandRows_ - 1) waiting_.clear();
    while (static_cast<int64_t>(waiting_.size()) > rowHalo()) waiting_.erase(waiting_.begin());
  }

  /// rowReuse: per group of dy depths and kw, xT row `row` [positions; slots, ci] is the
  /// stationary of one matmul per kh, moving dyT of box row - kh x dilation, consecutive so the
  /// stationary loads once (while the boxes have equal positions).
  void multiplyRow(const Step& s, int64_t row) {
    forEachDepthGroup(s, [&](int64_t d0, int64_t g, const std::vector<XSet>& sets,
                             const std::vector<int64_t>& kws) {
      for (const int64_t kw : kws) {
        for (int64_t k = 0; k < static_cast<int64_t>(sets.size()); ++k) {
          const XSet& set = sets[static_cast<size_t>(k)];
          const int64_t h0 = row - set.kh * fwd_.dilation[1];
          const auto box = std::find_if(waiting_.begin(), waiting_.end(),
                                        [&](const auto& w) { return w.first.h0 == h0; });
          if (set.kw != kw || box == waiting_.end()) continue;
          const int32_t np = box->first.positions();
          packedMatmuls(
              s, k,
              xT_[0].select(0, rowSlot(row)).select(0, indexOf(kws, kw)).partitionSlice(0, np),
              dyTOf(box->second).partitionSlice(0, np), d0, g);
        }
      }
    });
  }

  /// Depth-packed: evicts each set's accumulator to SBUF (fp32) and adds, per unit, the blocks
  /// (slot kd + g, group g) by depthGroup selection matmuls (identity columns) into `out`.
  void reducePacked(const Step& s, const Tile& out) {
    const std::vector<DwUnit>& us = units(s);
    std::vector<int64_t> setOfUnit;
    const std::vector<XSet> sets = setsOf(us, &setOfUnit);
    const int64_t group = plan_.depthGroup, cp = plan_.ciParts;
    const int32_t rows = static_cast<int32_t>(plan_.depthSlots * cp);
    const auto evictedOf = [&](size_t k, int32_t parts, int64_t g) {
      return accSb_.partitionSlice(0, parts)
          .select(0, static_cast<int64_t>(k))
          .select(0, g)
          .slice(0, 0, s.cw);
    };
    for (size_t k = 0; k < sets.size() + static_cast<size_t>(plan_.pairAccs); ++k) {
      const auto kk = static_cast<int64_t>(k);
      if (k >= sets.size()) {  // rowPairs: centre and edge accumulators
        const int64_t slots = slotsOf(kk, static_cast<int64_t>(sets.size()));
        for (int64_t g = 0; g < group && started_[k]; ++g)
          copy(evictedOf(k, static_cast<int32_t>(slots * cp), g),
               packedAcc(kk, slots, group, s.cw).select(0, g));
        continue;
      }
      for (int64_t g = 0; g < group && started_[k]; ++g)
        copy(evictedOf(k, rows, g), packedAcc(kk, plan_.depthSlots, group, s.cw).select(0, g));
      if (plan_.depthPairs && edgeStarted_[k])
        copy(evictedOf(k, static_cast<int32_t>(cp), 2),
             packedAcc(kk, 1, plan_.accGroups, s.cw).select(0, 2));
    }
    const int64_t perBank = b_.geometry().psumBankBytes() / 4 / plan_.coWidth;
    b_.setNote("dw add depth blocks");
    for (size_t i0 = 0; i0 < us.size(); i0 += static_cast<size_t>(perBank)) {
      const size_t i1 = std::min(us.size(), i0 + static_cast<size_t>(perBank));
      const Tile bank = banks_.next()
                            .partitionSlice(0, static_cast<int32_t>(cp))
                            .slice(0, 0, static_cast<int64_t>(i1 - i0) * plan_.coWidth)
                            .reshape({static_cast<int64_t>(i1 - i0), plan_.coWidth});
      for (size_t i = i0; i < i1; ++i) {
        const std::vector<Block> blocks = blocksOfUnit(us[i].tap, setOfUnit[i], sets);
        for (size_t j = 0; j < blocks.size(); ++j) {
          const auto [k, slot, g, parts] = blocks[j];
          b_.matmul(bank.select(0, static_cast<int64_t>(i - i0)).slice(0, 0, s.cw),
                    identity_.partitionSlice(0, parts).slice(0, slot * cp, (slot + 1) * cp),
                    evictedOf(k, parts, g), j > 0);
        }
      }
      copy(out.partitionSlice(0, static_cast<int32_t>(cp))
               .slice(0, static_cast<int64_t>(i0), static_cast<int64_t>(i1))
               .slice(1, 0, s.cw),
           bank.slice(1, 0, s.cw));
      for (size_t i = i0; i < i1; ++i)  // a tap no matmul reached (rowPairs: kh 1 of no single box)
        if (blocksOfUnit(us[i].tap, setOfUnit[i], sets).empty())
          b_.memset(out.partitionSlice(0, static_cast<int32_t>(cp))
                        .select(0, static_cast<int64_t>(i))
                        .slice(0, 0, s.cw),
                    0.0f, isa::Engine::Vector);
    }
  }

  /// A block of an evicted packed accumulator: accumulator, slot, column group, partitions.
  struct Block {
    size_t k;
    int64_t slot, g;
    int32_t parts;
  };

  /// rowPairs: slots of pair accumulator k (centre 4, edge 4 or 2).
  int64_t slotsOf(int64_t k, int64_t nsets) const {
    return k >= edgeAcc(nsets, 0, 0) && (k - edgeAcc(nsets, 0, 0)) % 2 == 1 ? 2 : 4;
  }

  /// The started blocks unit `tap` (of set k) sums: its set's (blocksOf); with rowPairs also
  /// the centre blocks (box q meets kh = 1 + r - q at slot 2r + a, a = kd - 1 + g) and, for kd 0
  /// and 2, the edge blocks (slot (kw, r) kw-outer, group q).
  std::vector<Block> blocksOfUnit(int64_t tap, int64_t k, const std::vector<XSet>& sets) const {
    const Int3 t = tapOf(tap);
    const auto ks = static_cast<size_t>(k);
    const auto rows = static_cast<int32_t>(plan_.depthSlots * plan_.ciParts);
    const auto cp = static_cast<int32_t>(plan_.ciParts);
    std::vector<Block> blocks;
    for (const auto& [slot, g] : blocksOf(t[0], edgeStarted_[ks]))
      if (started_[ks]) blocks.push_back({ks, slot, g, g < plan_.depthGroup ? rows : cp});
    if (!plan_.rowPairs) return blocks;
    const auto nsets = static_cast<int64_t>(sets.size());
    const int64_t i = indexOf(kwsOf(sets), t[2]);
    for (int64_t q = 0; q < 2; ++q) {
      const int64_t r = t[1] - 1 + q;
      if (r < 0 || r > 1) continue;
      const auto c = static_cast<size_t>(centreAcc(nsets, q, i));
      for (int64_t g = 0; g < 2 && started_[c]; ++g) {
        const int64_t a = t[0] - 1 + g;
        if (a >= 0 && a <= 1) blocks.push_back({c, 2 * r + a, g, rows});
      }
      if (t[0] == 1) continue;
      const auto e = static_cast<size_t>(edgeAcc(nsets, t[0] / 2, i / 2));
      if (started_[e]) blocks.push_back({e, (i % 2) * 2 + r, q, (i < 2 ? 4 : 2) * cp});
    }
    return blocks;
  }

  /// Depth-packed: the (slot, column group) blocks of tap kd, (kd + g, g) for every group g; depth
  /// pairs (slot j meets group g at kd = 1 + j - g): the live ones of those and, for kd 2 when
  /// `edge` (an edge matmul ran), group 2's block on partitions 0..
  std::vector<std::pair<int64_t, int64_t>> blocksOf(int64_t kd, bool edge) const {
    std::vector<std::pair<int64_t, int64_t>> blocks;
    for (int64_t g = 0; g < plan_.depthGroup; ++g) {
      const int64_t slot = plan_.depthPairs ? kd - 1 + g : kd + g;
      if (slot >= 0 && slot < plan_.depthSlots) blocks.emplace_back(slot, g);
    }
    if (plan_.depthPairs && kd == 2 && edge) blocks.emplace_back(0, 2);
    return blocks;
  }

  /// Depth-packed with 2 dy depths a matmul and C_in a quadrant (32, so Kd <= 3): tap kd's
  /// blocks (slot kd, group 0) and (kd + 1, 1) start at quadrants, so where both lie in one half
  /// of the partitions (kd even) one Vector add gives the tap (A1: Vector moves data across
  /// partitions within a half), no fp32 selection matmuls; kd 1's selection matmuls land on
  /// partitions 0.. and Scalar moves the sum to partitions 32.. (the same half).
  bool byHalves() const {
    return plan_.depthGroup == 2 && plan_.ciParts == kQuadrant && !plan_.dyStationary &&
           b_.geometry().partitionHalf() % (2 * kQuadrant) == 0;
  }
  /// The pass holds every kd of consecutive (kh, kw) shifts, all of them started (their sums
  /// leave in one DMA per kd).
  bool wholeShifts(const Step& s) const {
    const std::vector<XSet> sets = setsOf(units(s), nullptr);
    if (static_cast<int64_t>(units(s).size()) != static_cast<int64_t>(sets.size()) * fwd_.taps[0])
      return false;
    const int64_t first = sets[0].kh * fwd_.taps[2] + sets[0].kw;
    for (size_t k = 0; k < sets.size(); ++k) {
      const int64_t shift = sets[k].kh * fwd_.taps[2] + sets[k].kw;
      if (shift != first + static_cast<int64_t>(k) || !started_[k]) return false;
    }
    return true;
  }

  /// byHalves: per tap kd, the sum of its blocks over every set of the pass into the out tile
  /// [kd x ci partitions; sets, co] (Vector adds from PSUM for even kd; selection matmuls whose
  /// stationary columns land the sum on partitions kd x ci for odd kd), then one store DMA per
  /// kd, triggered from Scalar, Sync and GpSimd in turn.
  void storeByHalves(const Step& s) {
    const std::vector<XSet> sets = setsOf(units(s), nullptr);
    const auto nsets = static_cast<int64_t>(sets.size());
    const int64_t cp = plan_.ciParts, cw = s.cw, kd0 = fwd_.taps[0];
    const auto rows = static_cast<int32_t>(plan_.depthSlots * cp);
    const auto blocks = [&](int64_t bank, int64_t k0, int64_t n, int64_t slot, int64_t g) {
      const int64_t width = plan_.depthGroup * plan_.coWidth;
      const int64_t first = k0 % plan_.accsPerBank * width;
      return accs_[bank]
          .partitionSlice(static_cast<int32_t>(slot * cp), static_cast<int32_t>(cp))
          .slice(0, first, first + n * width)
          .reshape({n, plan_.depthGroup, plan_.coWidth})
          .select(1, g)
          .slice(1, 0, cw);
    };
    const Tile sums = outs_.next();
    const auto sumsOf = [&](int64_t kd) {
      return sums.partitionSlice(static_cast<int32_t>(kd * cp), static_cast<int32_t>(cp))
          .slice(0, 0, nsets)
          .slice(1, 0, cw);
    };
    // the sets' accumulators to SBUF; odd kd: selection matmuls, evicted on Scalar
    for (int64_t k = 0; k < nsets; ++k)
      copy(accSb_.partitionSlice(0, rows).select(0, k).slice(1, 0, cw),
           packedAcc(k, plan_.depthSlots, plan_.depthGroup, cw));
    b_.setNote("dw add depth blocks");
    const int64_t perBank = b_.geometry().psumBankBytes() / 4 / plan_.coWidth;
    for (int64_t kd = 1; kd < kd0; kd += 2) {
      for (int64_t k0 = 0; k0 < nsets; k0 += perBank) {
        const int64_t n = std::min(perBank, nsets - k0);
        const Tile bank = banks_.next()
                              .partitionSlice(0, static_cast<int32_t>(cp))
                              .slice(0, 0, n * plan_.coWidth)
                              .reshape({n, plan_.coWidth})
                              .slice(1, 0, cw);
        // per set, so each starts once its own accumulator is evicted
        for (int64_t k = 0; k < n; ++k)
          for (int64_t g = 0; g < plan_.depthGroup; ++g)
            b_.matmul(bank.select(0, k),
                      identity_.partitionSlice(0, rows).slice(0, (kd + g) * cp, (kd + g + 1) * cp),
                      accSb_.partitionSlice(0, rows).select(0, k0 + k).select(0, g).slice(0, 0, cw),
                      g > 0);
        copyOn(b_, sumsOf(kd).slice(0, k0, k0 + n), bank, isa::Engine::Scalar);
      }
    }
    // even kd: one Vector add per bank of the PSUM block and the evicted one (two PSUM inputs
    // are not allowed)
    for (int64_t kd = 0; kd < kd0; kd += 2)
      for (int64_t k0 = 0; k0 < nsets; k0 += plan_.accsPerBank) {
        const int64_t n = std::min(plan_.accsPerBank, nsets - k0);
        const int64_t bank = k0 / plan_.accsPerBank;
        const Tile evicted =
            accSb_.partitionSlice(static_cast<int32_t>((kd + 1) * cp), static_cast<int32_t>(cp))
                .slice(0, k0, k0 + n)
                .select(1, 1)
                .slice(1, 0, cw);
        b_.tensorTensor(sumsOf(kd).slice(0, k0, k0 + n), blocks(bank, k0, n, kd, 0), evicted,
                        isa::AluOp::Add);
      }
    b_.setNote("dw store");
    const Int3& k = fwd_.taps;
    const int64_t shifts = k[1] * k[2], first = sets[0].kh * k[2] + sets[0].kw;
    const HbmView all = dw_.reshape({k[0], shifts, fwd_.cin, fwd_.cout});
    for (int64_t kd = 0; kd < kd0; ++kd) {
      // odd kd after its Scalar eviction; even ones from Sync and GpSimd in turn
      const isa::Engine trigger = kd % 2 == 1   ? isa::Engine::Scalar
                                  : kd % 4 == 0 ? isa::Engine::Sync
                                                : isa::Engine::GpSimd;
      b_.dmaCopy(all.select(0, kd)
                     .slice(0, first, first + nsets)
                     .slice(1, 0, cp)
                     .slice(2, s.co0, s.co0 + cw)
                     .permute({1, 0, 2}),
                 sumsOf(kd), DmaOptions{-1, trigger});
    }
  }

  /// Input depth of unit `i` for dy depth `d`, and whether it holds x (not padding).
  int64_t depthOf(const Step& s, size_t i, int64_t d) const {
    return d * fwd_.stride[0] + tapOf(units(s)[i].tap)[0] * fwd_.dilation[0];
  }
  bool live(const Step& s, size_t i, int64_t d) const {
    const auto [lo, hi] = xDepths(*s.chunk);
    const int64_t dd = depthOf(s, i, d);
    return dd >= lo && dd < hi;
  }

  /// xT [positions, ci] stationary, dyT [positions, co] moving: one matmul per live unit.
  void multiplyXStationary(const Step& s, const std::vector<int64_t>& setOfUnit, int64_t d,
                           const Tile& dyT, const Tile& xT) {
    const std::vector<DwUnit>& us = units(s);
    for (size_t i = 0; i < us.size(); ++i) {
      if (!live(s, i, d)) continue;
      const int64_t cs = ciCount(us[i].ciTile);
      const Tile stationary =
          xT.select(0, setOfUnit[i]).select(0, depthOf(s, i, d)).slice(0, 0, cs);
      b_.matmul(acc(i, cs, s.cw).select(0, 0), stationary, dyT, started_[i]);
      started_[i] = true;
    }
  }

  /// dyT [positions, co] stationary; per run of live units sharing a shift, C_in tile, bank and
  /// start state with consecutive kd, one matmul with moving xT [positions; kd, ci].
  void multiplyDyStationary(const Step& s, const std::vector<int64_t>& setOfUnit, int64_t d,
                            const Tile& dyT, const Tile& xT) {
    const std::vector<DwUnit>& us = units(s);
    const int64_t kdStep = fwd_.taps[1] * fwd_.taps[2];
    const int64_t perBank = plan_.accsPerBank;
    for (size_t i = 0; i < us.size();) {
      if (!live(s, i, d)) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < us.size() && live(s, j, d) && setOfUnit[j] == setOfUnit[i] &&
             us[j].ciTile == us[i].ciTile && us[j].tap == us[j - 1].tap + kdStep &&
             static_cast<int64_t>(j) / perBank == static_cast<int64_t>(i) / perBank &&
             started_[j] == started_[i])
        ++j;
      const int64_t n = static_cast<int64_t>(j - i), cs = ciCount(us[i].ciTile);
      const int64_t dd = depthOf(s, i, d), dild = fwd_.dilation[0];
      const Tile moving =
          xT.select(0, setOfUnit[i]).slice(0, dd, dd + (n - 1) * dild + 1, dild).slice(1, 0, cs);
      b_.matmul(acc(i, cs, s.cw, n), dyT, moving, started_[i]);
      for (size_t u = i; u < j; ++u) started_[u] = true;
      i = j;
    }
  }

  /// dy stationary: evicts the accumulators [co, ci] and transposes them into `out` [ci, co].
  void transposeAccumulators(const Step& s, const Tile& out) {
    const std::vector<DwUnit>& us = units(s);
    const Tile evicted = evicted_.next();
    const int32_t cw = static_cast<int32_t>(s.cw);
    for (size_t i = 0; i < us.size(); ++i) {
      if (!started_[i]) continue;
      const int64_t cs = ciCount(us[i].ciTile);
      const Tile src = evicted.partitionSlice(0, cw).select(0, static_cast<int64_t>(i));
      copy(src.slice(0, 0, cs), acc(i, cs, s.cw).select(0, 0));
      transposeRun({src.slice(0, 0, cs)},
                   out.partitionSlice(0, static_cast<int32_t>(cs))
                       .slice(0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1)
                       .slice(1, 0, s.cw));
    }
    emitJobs(jobs_.size());
  }

  /// Evicts the pass's accumulators and stores them: one DMA per run of units with the same
  /// (kh, kw, C_in tile) and consecutive kd (triggered from Scalar).
  void store(const Step& s) {
    b_.setNote("dw store");
    if (packed() && byHalves() && wholeShifts(s) && !plan_.rowPairs) return storeByHalves(s);
    const std::vector<DwUnit>& us = units(s);
    const Tile out = outs_.next();
    if (plan_.dyStationary) transposeAccumulators(s, out);
    if (packed()) reducePacked(s, out);
    for (size_t i = 0; i < us.size(); ++i) {
      const int64_t cs = ciCount(us[i].ciTile);
      const Tile dst = out.partitionSlice(0, static_cast<int32_t>(cs))
                           .select(0, static_cast<int64_t>(i))
                           .slice(0, 0, s.cw);
      if (packed()) continue;
      if (started_[i]) {
        if (!plan_.dyStationary) copy(dst, acc(i, cs, s.cw).select(0, 0));
      } else {
        b_.memset(dst, 0.0f, isa::Engine::Vector);  // the tap meets only padding depth
      }
    }
    const Int3& k = fwd_.taps;
    const int64_t shifts = k[1] * k[2];
    const HbmView all = dw_.reshape({k[0], shifts, fwd_.cin, fwd_.cout});
    // a run: units of one C_in tile with consecutive kd; runs holding every kd of consecutive
    // shifts share one DMA [ci; shifts, kd, co] (its trigger costs as much as a run's)
    auto runEnd = [&](size_t i) {
      size_t j = i + 1;
      while (j < us.size() && us[j].ciTile == us[i].ciTile && us[j].tap == us[j - 1].tap + shifts)
        ++j;
      return j;
    };
    auto wholeShift = [&](size_t i, size_t j) {
      return static_cast<int64_t>(j - i) == k[0] && tapOf(us[i].tap)[0] == 0;
    };
    for (size_t i = 0; i < us.size();) {
      size_t j = runEnd(i);
      int64_t runs = 1;
      if (wholeShift(i, j))
        while (j < us.size() && us[j].ciTile == us[i].ciTile && us[j].tap == us[i].tap + runs &&
               wholeShift(j, runEnd(j))) {
          j = runEnd(j);
          ++runs;
        }
      const int64_t ci0 = us[i].ciTile * plan_.parts, cs = ciCount(us[i].ciTile);
      const int64_t kd0 = tapOf(us[i].tap)[0], shift = us[i].tap % shifts;
      const int64_t perRun = static_cast<int64_t>(j - i) / runs;
      const HbmView dst = all.slice(0, kd0, kd0 + perRun)
                              .slice(1, shift, shift + runs)
                              .slice(2, ci0, ci0 + cs)
                              .slice(3, s.co0, s.co0 + s.cw)
                              .permute({2, 1, 0, 3});
      b_.dmaCopy(dst,
                 out.partitionSlice(0, static_cast<int32_t>(cs))
                     .slice(0, static_cast<int64_t>(i), static_cast<int64_t>(j))
                     .slice(1, 0, s.cw)
                     .split(0, {runs, perRun}),
                 DmaOptions{-1, isa::Engine::Scalar});
      i = j;
    }
  }

  void copy(const Tile& dst, const Tile& src) { evict_(dst, src); }

  KernelBuilder& b_;
  const ConvCore& fwd_;
  const DwRowsPlan& plan_;
  isa::Dtype dtype_;
  HbmView dy_, x_, dw_;
  std::optional<HbmView> db_;  // plan_.db: db from the dyT tiles
  PsumEvictor evict_;
  BufferRing windows_, stages_, dyTiles_, dyT_, xT_, outs_, evicted_, banks_;
  Tile dbAcc_, ones_, dbOut_;         // db: [1, co] accumulator, ones column, evicted db
  Tile dbCol_, dbSelect_, dbOutCol_;  // dbBlocks() > 1: db column, selection, evicted db
  Tile dbRows_;                       // dbOnGpSimd: dy rows summed [parts; bands, depths, W]
  bool dbStarted_ = false;
  std::vector<Tile> accs_;
  Tile accSb_, identity_;  // depth-packed: evicted accumulators, selection matrix
  std::vector<std::pair<int64_t, int64_t>> zeroedDepths_;  // per xT ring slot
  int64_t bandRows_ = 1;                                   // shareKh: dy rows per band (row group)
  std::vector<bool> started_;
  std::vector<bool> edgeStarted_;  ///< depth pairs: per set, column group 2 holds a kd 2 edge
  std::vector<std::pair<Box, int>> waiting_;  // rowReuse: boxes (dyT ring slots) rows still meet
  std::vector<BankJob> jobs_;
  std::vector<Chunk> chunks_;
  std::vector<Step> steps_;
  std::optional<Pipeline> pipeline_;  // the steps over kBuffers load sets
  int64_t aheadStep_ = -1;            // the step whose first box prepareAhead queued
  int aheadRing_ = 0;                 // its dyT / xT ring slot
  bool primed_ = false;
};

DwRowsProgram::DwRowsProgram(KernelBuilder& builder, const ConvCore& forward,
                             const DwRowsPlan& plan, isa::Dtype dtype, const HbmView& dy,
                             const HbmView& x, const HbmView& dw, const std::optional<HbmView>& db)
    : emitter_(std::make_unique<DwRowsEmitter>(builder, forward, plan, dtype, dy, x, dw,
                                               plan.db ? db : std::nullopt)) {
  emitter_->begin();
}

DwRowsProgram::~DwRowsProgram() = default;

int64_t DwRowsProgram::steps() const {
  return emitter_->steps();
}

void DwRowsProgram::prime() {
  emitter_->prime();
}

void DwRowsProgram::emitThrough(int64_t end) {
  emitter_->emitThrough(end);
}

void DwRowsProgram::finish() {
  emitter_->finish();
}

void DwRowsProgram::abandon() {
  emitter_->abandon();
}

void buildConvDwRows(KernelBuilder& builder, const ConvCore& forward, const DwRowsPlan& plan,
                     isa::Dtype dtype, const HbmView& dy, const HbmView& x, const HbmView& dw,
                     const std::optional<HbmView>& db) {
  DwRowsProgram(builder, forward, plan, dtype, dy, x, dw, db).finish();
}

}  // namespace neuronsim::kernels
