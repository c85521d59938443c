// The conv core program: resident filter groups, double-buffered input windows (zero slabs where
// they cross the border), one matmul per live tap (or packed tap group) and C_in tile into PSUM,
// fused bias/activation eviction alternating Vector and Scalar, one store per chunk and C_out tile.
#include "kernels/conv/conv_build.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/builder/pipeline.h"
#include "kernels/builder/ring.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_window.h"

namespace neuronsim::kernels {

namespace {

constexpr int kBuffers = 2;
constexpr int64_t kFilterDmas = 4;  // filter loads per C_in tile (the first taps arrive early)
constexpr int64_t kQuadrant = isa::kQuadrantPartitions;
constexpr int kTransposeLag = kPairRing / 2;  // sub-blocks multiplied before one is transposed

int64_t product(const Int3& v) {
  return v[0] * v[1] * v[2];
}

/// Emits one ConvCore: filters, chunk windows, per-block matmuls, evictions and stores.
class ConvEmitter {
 public:
  ConvEmitter(KernelBuilder& b, const ConvCore& core, const ConvOptions& options, isa::Dtype dtype,
              const HbmView& x, const HbmView& filters, const std::optional<HbmView>& bias,
              const HbmView& out)
      : b_(b),
        core_(core),
        plan_(planConv(core, dtype, b.geometry(), options)),
        dtype_(dtype),
        x_(x),
        filters_(filters),
        bias_(bias),
        out_(out),
        placeEngines_(plan_.placeEngines),
        evictEngines_(plan_.evictEngines),
        copyEngines_(plan_.copyEngines),
        ring_(plan_.window[0]),
        afterChunk_(options.afterChunk) {}

  void run() {
    allocate();
    const std::vector<Chunk> chunks = chunkList(core_, plan_.chunk);
    struct Step {
      int64_t g0;
      const Chunk* chunk;
    };
    std::vector<Step> steps;
    for (int64_t g0 = 0; g0 < core_.cout; g0 += plan_.coGroup)
      for (const Chunk& chunk : chunks) steps.push_back({g0, &chunk});
    if (afterChunk_) afterChunk_(-1, static_cast<int64_t>(steps.size()));
    // A C_out group's filters load after its first window and before the next item's window.
    int64_t filtersOf = -1;
    auto ensureFilters = [&](int64_t item) {
      const Step& step = steps[static_cast<size_t>(item)];
      if (filtersOf == step.g0) return;
      filtersOf = step.g0;
      loadFilters(step.g0, std::min(plan_.coGroup, core_.cout - step.g0),
                  firstStoredTap(*step.chunk));
    };
    // rolling planes: the ring holds the planes of (lookahead + 1) chunks
    const int sets = plan_.rollingPlanes ? static_cast<int>(kRingLookahead + 1) : kBuffers;
    runPipelined(
        static_cast<int64_t>(steps.size()), sets,
        [&](int64_t item, int set) {
          if (item > 0) ensureFilters(item - 1);
          const Chunk& chunk = *steps[static_cast<size_t>(item)].chunk;
          if (!plan_.rollingPlanes) return loadWindow(chunk, set);
          loadRing(item, chunk);
          // the ring loads more than one item ahead: the first filters follow the first window
          if (item == 0) ensureFilters(0);
        },
        [&](int64_t item, int set) {
          ensureFilters(item);
          const int64_t g0 = steps[static_cast<size_t>(item)].g0;
          if (plan_.rollingPlanes) {
            emitSlotCopies(item + 1);
            ringPlanes_ = ring_.take(item);
            set = 0;
          }
          computeChunk(*steps[static_cast<size_t>(item)].chunk, set, g0,
                       std::min(plan_.coGroup, core_.cout - g0));
          if (afterChunk_) afterChunk_(item, static_cast<int64_t>(steps.size()));
        });
    settle(0);
    releaseAll();
  }

 private:
  void releaseAll() {
    b_.release(weights_);
    if (plan_.planePairs) b_.release(pairedWeights_);
    if (bias_) b_.release(biasTile_);
    for (BufferRing* ring : {&windows_, &stages_, &outs_, &psums_, &pairPsums_, &pairTiles_})
      ring->release(b_);
  }

  void allocate() {
    const Int3& w = plan_.window;
    const Int3& c = plan_.chunk;
    const int64_t coParts = std::min(plan_.coGroup, plan_.parts);
    weights_ = b_.sbuf({plan_.ciParts, plan_.ciTiles, plan_.tapColumns, filterColumns()}, dtype_,
                       "filters");
    if (plan_.pack > 1) b_.memset(weights_, 0.0f, isa::Engine::Vector);
    if (plan_.planePairs) {
      pairedWeights_ = b_.sbuf({plan_.parts, (core_.taps[0] + 1) * rowColumns(), pairedColumns()},
                               dtype_, "paired_filters");
      b_.memset(pairedWeights_, 0.0f, isa::Engine::GpSimd);
    }
    if (bias_)
      biasTile_ =
          b_.sbuf({coParts, isa::ceilDiv(plan_.coGroup, plan_.parts)}, isa::Dtype::Fp32, "bias");
    const int64_t columns = plan_.perTap ? core_.tapCount() : 1;
    const int windowBuffers = plan_.rollingPlanes ? 1 : kBuffers;
    windows_ = BufferRing::sbuf(b_, windowBuffers,
                                {plan_.ciParts, plan_.ciTiles * columns, w[0], w[1], w[2]}, dtype_,
                                "window");
    // Slot partitions past C_in meet zero filters but are read: they must hold zeros.
    for (int i = 0; i < windowBuffers && plan_.pack > 1 && core_.cin < plan_.slotParts; ++i)
      b_.memset(windows_[i].select(0, 0), 0.0f, isa::Engine::GpSimd);
    if (plan_.staged) {
      const Int3& s = plan_.stage;
      stages_ = BufferRing::sbuf(b_, kBuffers, {plan_.ciParts, plan_.ciTiles, s[0], s[1], s[2]},
                                 dtype_, "stage");
    }
    if (plan_.positionsStationary && planeWise() && !bias_ && !plan_.quadrantGroups) {
      const int64_t quadrants = std::max<int64_t>(1, plan_.parts / kQuadrant);
      if (halfBase(quadrants - 1) + filterColumns() <= plan_.parts) quadrants_ = quadrants;
    }
    const bool allParts = quadrants_ > 1 || plan_.quadrantGroups;
    // plane pairs: plane p on partitions from 0, plane p + 1 from the half
    outs_ = BufferRing::sbuf(b_, kBuffers,
                             {allParts || plan_.planePairs ? plan_.parts : coParts,
                              plan_.planePairs ? 1 : c[0], c[1], c[2]},
                             out_.dtype(), "out");
    const int64_t accRows = halfBase(quadrants_ - 1) > 0 || plan_.quadrantGroups || plan_.planePairs
                                ? plan_.parts
                                : std::min(filterColumns(), plan_.parts);
    psums_ = BufferRing::psum(b_, static_cast<int>(plan_.psumBuffers),
                              {accRows, product(plan_.block)}, isa::Dtype::Fp32, "acc");
    if (!plan_.positionsStationary) return;
    const int ring = kPairRing;
    pairPsums_ =
        BufferRing::psum(b_, ring, {plan_.parts, plan_.pairColumns}, isa::Dtype::Fp32, "pairs_acc");
    if (plan_.quadrantGroups) {
      transposeLag_ = 1;
      pairTiles_ =
          BufferRing::sbuf(b_, ring, {plan_.parts, 2 * plan_.parts}, pairDtype(), "pairs_out");
      // Quadrant columns past C_out are transposed too (into rows never evicted): zeros.
      for (int i = 0; i < ring && core_.cout < plan_.groupParts; ++i)
        b_.memset(pairTiles_[i], 0.0f, isa::Engine::GpSimd);
      return;
    }
    const int64_t halfColumns = halfBase(quadrants_ - 1);
    pairTiles_ = BufferRing::sbuf(b_, ring, {plan_.parts, halfColumns + filterColumns()},
                                  pairDtype(), "pairs_out");
    // The upper half's transposes read the lower columns too (their rows are never evicted).
    for (int i = 0; i < ring && halfColumns > 0; ++i)
      b_.memset(pairTiles_[i].slice(0, 0, halfColumns), 0.0f, isa::Engine::GpSimd);
  }

  /// Every block lies in one depth plane and blocks come depth by depth.
  bool planeWise() const {
    return plan_.block[0] == 1 && plan_.phase[0] == 1 && plan_.phase[1] == 1 &&
           plan_.phase[2] == plan_.pairs;
  }

  /// The partition quadrant holding output plane `depth` (of the whole output) in the out tile.
  int64_t quadrantOf(int64_t depth) const { return depth % quadrants_; }

  /// The first partition of the machine's half holding `quadrant` (A1: results move across
  /// partitions only within a half, so a quadrant's PSUM block starts there).
  int64_t halfBase(int64_t quadrant) const {
    const int64_t half = b_.geometry().partitionHalf();
    return quadrant * kQuadrant / half * half;
  }

  /// The dtype of evicted sub-block results before their transpose: the kernel dtype when the
  /// final eviction only copies (a copy of a rounded value rounds the same), else fp32.
  isa::Dtype pairDtype() const {
    return bias_ || core_.act != isa::ActFn::Copy ? isa::Dtype::Fp32 : dtype_;
  }

  /// Filter (and PSUM) columns of a C_out group: both W offsets' blocks when outputs are paired.
  int64_t filterColumns() const {
    return plan_.pairs > 1 ? plan_.pairStride + plan_.coGroup : plan_.coGroup;
  }

  /// Packed filter columns per kd tap: its (kh, kw group) rows.
  int64_t rowColumns() const { return plan_.tapColumns / core_.taps[0]; }

  /// Plane pairs: stationary columns of a paired filter row (plane p + 1's from the half).
  int64_t pairedColumns() const { return b_.geometry().partitionHalf() + filterColumns(); }

  /// Plane pairs: paired row (z, r) holds packed row r of tap kd = z in columns [0, F) and of
  /// kd = z - 1 from the half (zeros where the tap does not exist); r is a packed row's place
  /// within its kd block, the same for every kd (flipped taps store kd blocks in reverse).
  void pairFilters() {
    const int64_t kd = core_.taps[0], r = rowColumns(), half = b_.geometry().partitionHalf();
    const Tile packed = weights_.select(0, 0);
    for (int64_t z = 0; z < kd; ++z) {
      const int64_t block = core_.flipTaps ? kd - 1 - z : z;
      const Tile src = packed.slice(0, block * r, (block + 1) * r);
      copyOn(b_, pairedWeights_.slice(0, z * r, (z + 1) * r).slice(1, 0, filterColumns()), src,
             isa::Engine::GpSimd);
      copyOn(
          b_,
          pairedWeights_.slice(0, (z + 1) * r, (z + 2) * r).slice(1, half, half + filterColumns()),
          src, isa::Engine::GpSimd);
    }
  }

  int64_t ciCount(int64_t t) const { return std::min(plan_.parts, core_.cin - t * plan_.parts); }

  /// Packed filters: tap (kd, kh, kw) sits on slot kw % pack of column (packedRow(kd, kh), kw /
  /// pack); one DMA per kw tap carries every (kd, kh) row (per tap with C_out-major filters).
  /// The odd offset's copy (slot kw + 1) of transposed filters is one SBUF-to-SBUF DMA.
  void loadPackedFilters(int64_t g0, int64_t group) {
    if (core_.filtersCoCi && plan_.quadrantGroups) return loadPairedFiltersByPe(g0, group);
    const Int3& k = core_.taps;
    const int64_t cs = core_.cin, taps = core_.tapCount(), rows = k[0] * k[1];
    const int64_t groupsPerRow = isa::ceilDiv(k[2], plan_.pack);
    auto slotOf = [&](int64_t kw, int64_t g) {
      const int32_t first = static_cast<int32_t>((kw + g) % plan_.pack * plan_.slotParts);
      const int64_t c0 = g * plan_.pairStride;
      return weights_.partitionSlice(first, static_cast<int32_t>(cs))
          .select(0, 0)
          .split(0, {rows, groupsPerRow})
          .select(1, kw / plan_.pack)
          .slice(1, c0, c0 + group);
    };
    auto storedKw = [&](int64_t kw) { return core_.flipTaps ? k[2] - 1 - kw : kw; };
    for (int64_t kw = 0; kw < k[2] && !core_.filtersCoCi; ++kw)
      for (int64_t g = 0; g < plan_.pairs; ++g)
        b_.dmaCopy(slotOf(kw, g),
                   filters_.reshape({rows, k[2], core_.cin, core_.cout})
                       .select(1, storedKw(kw))
                       .slice(2, g0, g0 + group)
                       .permute({1, 0, 2}),
                   filterDma());
    // C_out-major filters: one DMA transpose per tap, in the order the matmuls use them
    for (int64_t used = 0; used < rows && core_.filtersCoCi; ++used) {
      const int64_t row = packedRow(used / k[1], used % k[1]);
      for (int64_t kw = 0; kw < k[2]; ++kw)
        b_.dmaTranspose(slotOf(kw, 0).select(0, row),
                        filters_.reshape({taps, core_.cout, core_.cin})
                            .select(0, row * k[2] + storedKw(kw))
                            .slice(0, g0, g0 + group),
                        filterDma());
    }
    // pairs: pack > Kw, so slot kw + 1 never wraps and one DMA shifts all kw slots by a slot
    if (!core_.filtersCoCi || plan_.pairs == 1) return;
    const int32_t span = static_cast<int32_t>((k[2] - 1) * plan_.slotParts + cs);
    auto slots = [&](int64_t g) {
      const int64_t c0 = g * plan_.pairStride;
      return weights_.partitionSlice(static_cast<int32_t>(g * plan_.slotParts), span)
          .select(0, 0)
          .split(0, {rows, groupsPerRow})
          .select(1, 0)
          .slice(1, c0, c0 + group);
    };
    b_.dmaCopy(slots(1), slots(0), filterDma());
  }

  /// C_out-major packed filters with quadrant groups (paired outputs; the PSUM blocks span all
  /// partitions and take the transposes): loaded as stored into [C_out partitions;
  /// pack + 1 slots, rows, slotParts] (one DMA per kw tap, into slot kw + 1; the other slots and
  /// channels past C_in are zeros), then per (kd, kh) row one PE transpose per W offset g of
  /// slots [1 - g, 1 - g + pack) gives [(slot, C_in), C_out] with tap kw on slot kw + g, evicted
  /// into the filter columns. TensorE is idle in the prologue; 27 per-tap DMA transposes and the
  /// odd offset's SBUF copy held the first matmul about 11 us.
  void loadPairedFiltersByPe(int64_t g0, int64_t group) {
    const Int3& k = core_.taps;
    const int64_t rows = k[0] * k[1], slot = plan_.slotParts;
    const Tile stored = b_.sbuf({group, plan_.pack + 1, rows, slot}, dtype_, "filters_co");
    if (core_.cin < slot) {
      b_.memset(stored, 0.0f, isa::Engine::Vector);
    } else {  // slots without a tap only: the DMAs need not wait for the memsets
      b_.memset(stored.select(0, 0), 0.0f, isa::Engine::Vector);
      b_.memset(stored.slice(0, k[2] + 1, plan_.pack + 1), 0.0f, isa::Engine::Vector);
    }
    for (int64_t kw = 0; kw < k[2]; ++kw)
      b_.dmaCopy(stored.select(0, kw + 1).slice(1, 0, core_.cin),
                 filters_.reshape({rows, k[2], core_.cout, core_.cin})
                     .select(1, core_.flipTaps ? k[2] - 1 - kw : kw)
                     .slice(1, g0, g0 + group)
                     .permute({1, 0, 2}),
                 filterDma());
    const Tile weights = weights_.select(0, 0);  // [(slot, ci), rows, (g, co)]
    const int64_t perBank = std::max<int64_t>(1, psums_[0].freeSize() / filterColumns());
    for (int64_t r0 = 0; r0 < rows; r0 += perBank) {
      const int64_t nr = std::min(perBank, rows - r0);
      const Tile ps =
          psums_.next().slice(0, 0, nr * filterColumns()).split(0, {nr, filterColumns()});
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t g = 0; g < 2; ++g) {
          const int64_t c0 = g * plan_.pairStride;
          b_.transpose(ps.select(0, r).slice(0, c0, c0 + group),
                       stored.slice(0, 1 - g, 1 - g + plan_.pack).select(1, r0 + r));
        }
      for (int64_t g = 0; g < 2; ++g) {
        const int64_t c0 = g * plan_.pairStride;
        copyOn(b_, weights.slice(0, r0, r0 + nr).slice(1, c0, c0 + group),
               ps.slice(1, c0, c0 + group), evictEngines_.next());
      }
    }
    b_.release(stored);
  }

  /// Filter DMAs are triggered from GpSimd (swdge, about 0.2 us each for these small
  /// descriptors) and Scalar in turn, 4 queues deep: on Sync each per-tap transpose took 600 ns
  /// ahead of the next window's loads.
  DmaOptions filterDma() { return DmaOptions{-1, filterIssue_.next()}; }

  /// The packed filter row of taps (kd, kh): rows follow the stored order (reversed when taps
  /// are flipped), so one DMA per kw tap loads all of them.
  int64_t packedRow(int64_t kd, int64_t kh) const {
    const int64_t row = kd * core_.taps[1] + kh;
    return core_.flipTaps ? core_.taps[0] * core_.taps[1] - 1 - row : row;
  }

  /// The stored tap of `chunk`'s first matmul (0 when no tap meets x).
  int64_t firstStoredTap(const Chunk& chunk) const {
    std::optional<int64_t> first;
    forEachBlock(chunk, [&](const Int3& origin, const Int3& count) {
      const std::vector<TapUse> uses =
          first ? std::vector<TapUse>{} : tapsFor(chunk, origin, count);
      if (!uses.empty()) first = uses.front().stored;
    });
    return first.value_or(0);
  }

  /// Loads a C_out group's filters; unpacked C_in-major filters load from stored tap
  /// `firstTap` on (wrapping round), so the group's first matmul waits only for the first DMA
  /// (a chunk at the D border skips the taps over padding: conv3d C 128 starts at tap 9).
  void loadFilters(int64_t g0, int64_t group, int64_t firstTap) {
    b_.setNote("load filters");
    const int64_t taps = core_.tapCount();
    if (plan_.pack > 1) loadPackedFilters(g0, group);
    if (plan_.planePairs) pairFilters();
    for (int64_t t = 0; t < plan_.ciTiles && plan_.pack == 1; ++t) {
      const int64_t ci0 = t * plan_.parts, cs = ciCount(t);
      const Tile dst = weights_.partitionSlice(0, static_cast<int32_t>(cs)).select(0, t);
      if (!core_.filtersCoCi) {
        const HbmView src = filters_.reshape({taps, core_.cin, core_.cout})
                                .slice(1, ci0, ci0 + cs)
                                .slice(2, g0, g0 + group);
        const int64_t perDma = isa::ceilDiv(taps, kFilterDmas);
        for (const auto& [lo, hi] : {std::pair{firstTap, taps}, std::pair{int64_t{0}, firstTap}})
          for (int64_t k0 = lo; k0 < hi; k0 += perDma) {
            const int64_t k1 = std::min(hi, k0 + perDma);
            b_.dmaCopy(dst.slice(0, k0, k1).slice(1, 0, group),
                       src.slice(0, k0, k1).permute({1, 0, 2}));
          }
        continue;
      }
      const HbmView all = filters_.reshape({taps, core_.cout, core_.cin});
      for (int64_t k = 0; k < taps; ++k)
        b_.dmaTranspose(dst.select(0, k).slice(0, 0, group),
                        all.select(0, k).slice(0, g0, g0 + group).slice(1, ci0, ci0 + cs),
                        filterDma());
    }
    if (!bias_) return;
    for (int64_t j = 0; j * plan_.parts < group; ++j) {
      const int64_t co0 = g0 + j * plan_.parts, cw = std::min(plan_.parts, g0 + group - co0);
      b_.dmaCopy(biasTile_.partitionSlice(0, static_cast<int32_t>(cw)).slice(0, j, j + 1),
                 bias_->slice(0, co0, co0 + cw).reshape({cw, 1}));
    }
  }

  void loadWindow(const Chunk& chunk, int slot) {
    b_.setNote("load window");
    for (int64_t j = 0; j < plan_.pack && plan_.pack > 1; ++j) {
      ConvCore shifted = core_;
      shifted.padLo[2] -= j * core_.dilation[2];
      const int32_t first = static_cast<int32_t>(j * plan_.slotParts);
      const int32_t cs = static_cast<int32_t>(core_.cin);
      std::optional<Tile> stage;
      if (plan_.staged) stage = stages_[slot].partitionSlice(first, cs).select(0, 0);
      kernels::loadWindow(b_, shifted, x_, chunk, 0,
                          windows_[slot].partitionSlice(first, cs).select(0, 0), stage,
                          placeEngine());
    }
    for (int64_t t = 0; t < plan_.ciTiles && plan_.pack == 1; ++t) {
      const int32_t cs = static_cast<int32_t>(ciCount(t));
      std::optional<Tile> stage;
      if (plan_.staged) stage = stages_[slot].partitionSlice(0, cs).select(0, t);
      if (!plan_.perTap) {
        kernels::loadWindow(b_, core_, x_, chunk, t * plan_.parts,
                            windows_[slot].partitionSlice(0, cs).select(0, t), stage,
                            placeEngine());
        continue;
      }
      for (int64_t tap = 0; tap < core_.tapCount(); ++tap)
        loadTapColumn(b_, core_, x_, chunk, t * plan_.parts, tapIndices(tap),
                      windows_[slot].partitionSlice(0, cs).select(0, t * core_.tapCount() + tap));
    }
  }

  /// Rolling planes: the ring positions of `chunk`'s window planes; a chunk one plane after the
  /// previous one (same batch and pass) loads only the plane it adds.
  void loadRing(int64_t item, const Chunk& chunk) {
    b_.setNote("load window");
    loadingItem_ = item;
    ring_.place(item, chunk.batch, chunk.origin[0] * core_.stride[0],
                windowExtent(core_, 0, chunk.extent[0]), [&](const SlidingRing::Fill& fill) {
                  return loadRingPlane(chunk, fill.index, fill.position, !fill.firstFill);
                });
  }

  /// Virtual input plane `z` of `chunk`'s batch into ring position `position` of every slot.
  /// Every chunk covers whole planes, so a position's H and W borders are the same for every
  /// plane it holds: they are zeroed on its first fill only. A plane in the depth padding is
  /// left alone (returns false): no live tap reads it (`packedTapsFor` checks the depth too).
  bool loadRingPlane(const Chunk& chunk, int64_t z, int64_t position, bool bordersZero) {
    if (!holdsInput(0, z, 1, 1)) return false;
    const Chunk plane{
        chunk.batch, {z, chunk.origin[1], chunk.origin[2]}, {1, chunk.extent[1], chunk.extent[2]}};
    for (int64_t j = 0; j < plan_.pack; j += plan_.slotCopies ? 2 : 1) {
      if (plan_.slotCopies) {
        loadSlotPair(plane, position, j, bordersZero);
        continue;
      }
      loadSlotColumns(plane, position, j, 0, plan_.window[2], bordersZero);
    }
    return true;
  }

  /// Ring position `position` of slot `j`: window columns [c0, c1) of virtual input plane
  /// `plane`, one DMA on queue j (zeros where the columns lie outside x, on the first fill).
  void loadSlotColumns(const Chunk& plane, int64_t position, int64_t j, int64_t c0, int64_t c1,
                       bool bordersZero) {
    ConvCore part = core_;
    part.padLo[2] -= j * core_.dilation[2] + c0;
    part.taps = {1, core_.taps[1], 1};
    part.dilation = {1, core_.dilation[1], 1};
    part.stride[2] = 1;
    const Chunk columns{
        plane.batch, {plane.origin[0], plane.origin[1], 0}, {1, plane.extent[1], c1 - c0}};
    kernels::loadWindow(b_, part, x_, columns, 0, slotPlane(j, position).slice(2, c0, c1),
                        std::nullopt, placeEngine(), bordersZero,
                        DmaOptions{static_cast<int32_t>(j), isa::Engine::Sync});
  }

  /// Slots j and j + 1 share a partition half (A1 lets VectorE move rows within it) and hold
  /// the same plane `dilation_w` columns apart: slot j loads its first columns, slot j + 1 its
  /// last, and VectorE copies each one's share into the other. Every dy element crosses the
  /// DMA once per slot pair, not once per slot.
  void loadSlotPair(const Chunk& plane, int64_t position, int64_t j, bool bordersZero) {
    const int64_t shift = core_.dilation[2], width = plan_.window[2];
    const int64_t mid = (width + shift + 1) / 2;  // slot j's first column past its own load
    loadSlotColumns(plane, position, j, 0, mid, bordersZero);
    loadSlotColumns(plane, position, j + 1, mid - shift, width, bordersZero);
    const Tile lower = slotPlane(j, position), upper = slotPlane(j + 1, position);
    pendingCopies_[loadingItem_].push_back([=, this] {
      b_.setNote("load window");
      copyOn(b_, upper.slice(2, 0, mid - shift), lower.slice(2, shift, mid), copyEngines_.next());
      copyOn(b_, lower.slice(2, mid, width), upper.slice(2, mid - shift, width - shift),
             copyEngines_.next());
    });
  }

  /// Emits the slot copies of the ring loads of items up to `last`. VectorE runs in order:
  /// copies emitted with their loads (two chunks ahead) waited there for the DMA and held back
  /// the evictions behind them.
  void emitSlotCopies(int64_t last) {
    while (!pendingCopies_.empty() && pendingCopies_.begin()->first <= last) {
      for (const std::function<void()>& copy : pendingCopies_.begin()->second) copy();
      pendingCopies_.erase(pendingCopies_.begin());
    }
  }

  /// Slot `j`'s [1, h, w] plane at ring position `position` (C_in partitions).
  Tile slotPlane(int64_t j, int64_t position) const {
    return windows_[0]
        .partitionSlice(static_cast<int32_t>(j * plan_.slotParts), static_cast<int32_t>(core_.cin))
        .select(0, 0)
        .slice(0, position, position + 1);
  }

  /// The window coordinate a matmul reads for window position `start`: rolling planes map the
  /// plane through the ring.
  Int3 windowAt(Int3 start) const {
    if (plan_.rollingPlanes) start[0] = ringPlanes_.at(static_cast<size_t>(start[0]));
    return start;
  }

  /// The engine filling the next window piece (zeros and staged copy), in turn.
  isa::Engine placeEngine() { return placeEngines_.next(); }

  /// True when some of `count` virtual coordinates from `z`, `step` apart, holds an x element.
  bool holdsInput(int axis, int64_t z, int64_t count, int64_t step) const {
    const int64_t idl = core_.inputDilation[axis];
    for (int64_t i = 0; i < count; ++i) {
      const int64_t r = z + i * step - core_.padLo[axis];
      if (r >= 0 && r % idl == 0 && r / idl < core_.in[axis]) return true;
    }
    return false;
  }

  int64_t storedTap(int64_t kd, int64_t kh, int64_t kw) const {
    const Int3& k = core_.taps;
    if (core_.flipTaps) {
      kd = k[0] - 1 - kd;
      kh = k[1] - 1 - kh;
      kw = k[2] - 1 - kw;
    }
    return (kd * k[1] + kh) * k[2] + kw;
  }

  /// One matmul's tap: window start of the block, filter column (stored tap, or packed group)
  /// and row-major tap index.
  struct TapUse {
    Int3 start;
    int64_t stored;
    int64_t index;
  };

  Int3 tapIndices(int64_t tap) const {
    const Int3& k = core_.taps;
    return {tap / (k[1] * k[2]), tap / k[2] % k[1], tap % k[2]};
  }

  /// Window step between neighbouring outputs of one block along `axis`.
  int64_t blockStep(int axis) const { return core_.stride[axis] * plan_.phase[axis]; }

  /// The taps that meet at least one x element for the block at `origin` (chunk coordinates).
  /// With input dilation every block's outputs share one phase, so a live tap reads only x
  /// elements and border zeros, never inserted zeros.
  std::vector<TapUse> tapsFor(const Chunk& chunk, const Int3& origin, const Int3& count) const {
    if (plan_.pack > 1) return packedTapsFor(chunk, origin, count);
    std::vector<TapUse> uses;
    const Int3& k = core_.taps;
    for (int64_t kd = 0; kd < k[0]; ++kd)
      for (int64_t kh = 0; kh < k[1]; ++kh)
        for (int64_t kw = 0; kw < k[2]; ++kw) {
          const Int3 kk{kd, kh, kw};
          TapUse use{{}, storedTap(kd, kh, kw), (kd * k[1] + kh) * k[2] + kw};
          bool live = true;
          for (int a = 0; a < 3; ++a) {
            use.start[a] = origin[a] * core_.stride[a] + kk[a] * core_.dilation[a];
            const int64_t z = chunk.origin[a] * core_.stride[a] + use.start[a];
            live = live && holdsInput(a, z, count[a], blockStep(a));
          }
          if (live) uses.push_back(use);
        }
    return uses;
  }

  /// Packed tap groups (kd, kh, kw0..kw0+pack-1) meeting at least one x element; `stored` is the
  /// filter column, `start` the window position of the group's first tap.
  std::vector<TapUse> packedTapsFor(const Chunk& chunk, const Int3& origin,
                                    const Int3& count) const {
    std::vector<TapUse> uses;
    const Int3& k = core_.taps;
    const int64_t groupsPerRow = isa::ceilDiv(k[2], plan_.pack);
    for (int64_t kd = 0; kd < k[0]; ++kd)
      for (int64_t kh = 0; kh < k[1]; ++kh)
        for (int64_t gw = 0; gw < groupsPerRow; ++gw) {
          TapUse use{{}, packedRow(kd, kh) * groupsPerRow + gw, 0};
          bool live = false;
          const int64_t lastSlot = std::min(k[2] + plan_.pairs - 1, (gw + 1) * plan_.pack);
          for (int64_t kw = gw * plan_.pack; kw < lastSlot; ++kw) {
            const Int3 kk{kd, kh, kw};
            bool tapLive = true;
            for (int a = 0; a < 3; ++a) {
              const int64_t start = origin[a] * core_.stride[a] + kk[a] * core_.dilation[a];
              tapLive = tapLive && holdsInput(a, chunk.origin[a] * core_.stride[a] + start,
                                              count[a], blockStep(a));
            }
            live = live || tapLive;
          }
          const Int3 first{kd, kh, gw * plan_.pack};
          for (int a = 0; a < 3; ++a)
            use.start[a] = origin[a] * core_.stride[a] + first[a] * core_.dilation[a];
          if (live) uses.push_back(use);
        }
    return uses;
  }

  /// Every block of `chunk`: per output phase, boxes of at most plan_.block outputs phase apart.
  template <typename Visit>
  void forEachBlock(const Chunk& chunk, Visit visit) const {
    const Int3& ph = plan_.phase;
    const Int3& blk = plan_.block;
    for (int64_t rd = 0; rd < std::min(ph[0], chunk.extent[0]); ++rd)
      for (int64_t rh = 0; rh < std::min(ph[1], chunk.extent[1]); ++rh)
        for (int64_t rw = 0; rw < std::min(ph[2] / plan_.pairs, chunk.extent[2]); ++rw) {
          const Int3 r{rd, rh, rw};
          Int3 n;
          for (int a = 0; a < 3; ++a) n[a] = isa::ceilDiv(chunk.extent[a] - r[a], ph[a]);
          for (int64_t d = 0; d < n[0]; d += blk[0])
            for (int64_t h = 0; h < n[1]; h += blk[1])
              for (int64_t w = 0; w < n[2]; w += blk[2]) {
                const Int3 origin{r[0] + d * ph[0], r[1] + h * ph[1], r[2] + w * ph[2]};
                const Int3 count{std::min(blk[0], n[0] - d), std::min(blk[1], n[1] - h),
                                 std::min(blk[2], n[2] - w)};
                visit(origin, count);
              }
        }
  }

  void computeChunk(const Chunk& chunk, int slot, int64_t g0, int64_t group) {
    if (plan_.quadrantGroups) return computeGroups(chunk, slot, g0, group);
    if (plan_.planePairs && chunk.extent[0] == 2) return computePlanePair(chunk, group);
    // When every block lies in one depth plane and blocks come depth by depth, finished planes
    // are stored while later ones compute: the last chunk's store is one plane, not the chunk.
    // With quadrants, plane d sits on partition quadrant d % 4 (its transposes in PSUM half
    // d % 4 / 2; A1 lets Vector and Scalar move rows within a half), so the stores spread over
    // all DMA engines (each serves 8 partitions, D1) instead of C_out's 4.
    const bool planeStores = planeWise();
    for (int64_t j = 0; j * plan_.parts < group; ++j) {
      const int64_t co0 = g0 + j * plan_.parts, cw = std::min(plan_.parts, g0 + group - co0);
      const Tile outAll = outs_.next();
      int64_t storedTo = 0;
      forEachBlock(chunk, [&](const Int3& origin, const Int3& count) {
        if (planeStores && origin[0] > storedTo) {
          defer([=, this, &chunk] { store(outAll, chunk, co0, cw, storedTo, origin[0]); });
          storedTo = origin[0];
        }
        const int64_t quadrant = quadrantOf(chunk.origin[0] + origin[0]);
        const int64_t base = halfBase(quadrant);
        const Tile outTile = outAll.partitionSlice(static_cast<int32_t>(quadrant * kQuadrant),
                                                   static_cast<int32_t>(cw));
        const int64_t rows = plan_.pairs > 1 ? plan_.pairStride + cw : cw;
        const Tile ps = psums_.next()
                            .partitionSlice(0, static_cast<int32_t>(base + rows))
                            .slice(0, 0, product(count));
        if (plan_.positionsStationary) {
          accumulateByPositions(ps, chunk, slot, origin, count, co0 - g0, rows, base);
        } else {
          accumulate(ps, chunk, slot, origin, count, co0 - g0, rows);
        }
        defer([=, this, &chunk] {
          const Tile block =
              ps.partitionSlice(static_cast<int32_t>(base), static_cast<int32_t>(rows));
          evict(box(outTile, origin, count, plan_.phase),
                block.partitionSlice(0, static_cast<int32_t>(cw)), j, cw, evictEngines_.next());
          if (plan_.pairs > 1)
            evictOdd(outTile, block, chunk, origin, count, j, cw, evictEngines_.next());
        });
      });
      defer([=, this, &chunk] { store(outAll, chunk, co0, cw, storedTo, chunk.extent[0]); });
      settle(0);
    }
  }

  /// Plane pairs: per block of the first plane's (h, w) boxes, the matmuls of both planes
  /// (`multiplyPlanePair`), each plane's rows evicted within their half (A1) to its half of the
  /// out tile; one store per plane.
  void computePlanePair(const Chunk& chunk, int64_t cw) {
    const Tile outAll = outs_.next();
    const int32_t half = b_.geometry().partitionHalf();
    const int32_t rows = static_cast<int32_t>(plan_.pairs > 1 ? plan_.pairStride + cw : cw);
    forEachBlock(chunk, [&](const Int3& origin, const Int3& count) {
      if (origin[0] != 0) return;
      const Tile ps = psums_.next().slice(0, 0, product(count));
      multiplyPlanePair(ps.partitionSlice(0, static_cast<int32_t>(pairedColumns())), chunk, origin,
                        count);
      for (int32_t i = 0; i < 2; ++i) {
        const Tile outTile = outAll.partitionSlice(i * half, static_cast<int32_t>(cw));
        const Tile block = ps.partitionSlice(i * half, rows);
        evict(box(outTile, origin, count, plan_.phase),
              block.partitionSlice(0, static_cast<int32_t>(cw)), 0, cw, evictEngines_.next());
        if (plan_.pairs > 1)
          evictOdd(outTile, block, chunk, origin, count, 0, cw, evictEngines_.next());
      }
    });
    b_.setNote("store out");
    for (int32_t i = 0; i < 2; ++i) {
      const int64_t d = chunk.origin[0] + i;
      const HbmView dst = out_.select(0, chunk.batch)
                              .slice(0, 0, cw)
                              .slice(1, d, d + 1)
                              .slice(2, chunk.origin[1], chunk.origin[1] + chunk.extent[1])
                              .slice(3, chunk.origin[2], chunk.origin[2] + chunk.extent[2]);
      const Tile src = outAll.partitionSlice(i * half, static_cast<int32_t>(cw));
      b_.dmaCopy(dst, box(src, {0, 0, 0}, {1, chunk.extent[1], chunk.extent[2]}, {1, 1, 1}),
                 DmaOptions{-1, isa::Engine::Scalar});
    }
  }

  /// One matmul per window plane z and (kh, kw group) live for either plane of the block at
  /// `origin` (plane p's tap kd = z, plane p + 1's kd = z - 1), paired filter row (z, r) against
  /// window plane z, into `ps` [plane p rows | plane p + 1 rows from the half].
  void multiplyPlanePair(const Tile& ps, const Chunk& chunk, const Int3& origin,
                         const Int3& count) {
    std::map<Int3, int64_t> rows;  // window start -> paired filter row
    for (int64_t p = 0; p < 2; ++p)
      for (const TapUse& use : packedTapsFor(chunk, {p, origin[1], origin[2]}, count))
        rows[use.start] = use.start[0] * rowColumns() + use.stored % rowColumns();
    b_.setNote("matmul");
    if (rows.empty()) return b_.memset(ps, 0.0f, isa::Engine::Vector);
    const Tile window =
        windows_[0].partitionSlice(0, static_cast<int32_t>(plan_.parts)).select(0, 0);
    const Int3 step{blockStep(0), blockStep(1), blockStep(2)};
    bool first = true;
    for (const auto& [start, row] : rows) {
      b_.matmul(ps, pairedWeights_.select(0, row), box(window, windowAt(start), count, step),
                !first);
      first = false;
    }
  }

  /// Grouped transposes: consecutive blocks of one depth plane with the same extent, up to one
  /// per partition quadrant, computed together (`computeGroup`); one store per group. The last
  /// group's transposes stay deferred into the next chunk (TensorE never waits for its evictions).
  void computeGroups(const Chunk& chunk, int slot, int64_t g0, int64_t cw) {
    const Tile outAll = outs_.next();
    std::vector<std::pair<Int3, Int3>> blocks;
    forEachBlock(
        chunk, [&](const Int3& origin, const Int3& count) { blocks.emplace_back(origin, count); });
    const size_t quadrants = static_cast<size_t>(plan_.parts / plan_.groupParts);
    for (size_t first = 0; first < blocks.size();) {
      size_t last = first + 1;
      while (last < blocks.size() && last - first < quadrants &&
             blocks[last].first[0] == blocks[first].first[0] &&
             blocks[last].second == blocks[first].second)
        ++last;
      computeGroup(chunk, slot, g0, cw, outAll,
                   std::vector(blocks.begin() + static_cast<std::ptrdiff_t>(first),
                               blocks.begin() + static_cast<std::ptrdiff_t>(last)));
      first = last;
    }
  }

  /// Blocks `group` (whole output rows, one depth, equal extents), block i on partition quadrant
  /// i (half i when C_out is 33..64, `groupParts`): per sub-block, each block's matmuls into
  /// [pairs, (g, C_out)] and an eviction into columns (i, g, C_out) of one tile (disjoint per
  /// block, so Vector and Scalar evict blocks in parallel), then one PE transpose per W offset g of
  /// [pairs, (i, C_out)] into the group's PSUM tile of offset g. So a transpose serves 4
  /// sub-blocks, each offset's eviction moves 128 partitions (4 blocks) at once, and the group is
  /// stored by one DMA over all 16 engines. The out tile holds block i's rows on quadrant i, from
  /// the first block's row.
  void computeGroup(const Chunk& chunk, int slot, int64_t g0, int64_t cw, const Tile& outAll,
                    const std::vector<std::pair<Int3, Int3>>& group) {
    const int32_t nq = static_cast<int32_t>(group.size());
    const int32_t rowsUsed = nq * static_cast<int32_t>(plan_.groupParts);
    const Int3 first = group.front().first, count = group.front().second;
    std::vector<std::vector<TapUse>> uses;
    for (const auto& [origin, extent] : group) uses.push_back(tapsFor(chunk, origin, extent));
    const Tile offsets[2] = {psums_.next().partitionSlice(0, rowsUsed).slice(0, 0, product(count)),
                             psums_.next().partitionSlice(0, rowsUsed).slice(0, 0, product(count))};
    const int64_t rows = plan_.pairStride + cw;
    forEachSubBlock(count, [&](const Int3& at, const Int3& sub, int64_t offset) {
      const int64_t n = product(sub);
      const int32_t np = static_cast<int32_t>(n);
      const Tile pairs = pairTiles_.next().partitionSlice(0, np).split(
          0, {plan_.parts / plan_.groupParts, 2, plan_.groupParts});
      for (int32_t i = 0; i < nq; ++i) {
        const Tile acc = pairPsums_.next().partitionSlice(0, np);
        const std::vector<TapUse>& blockUses = uses[static_cast<size_t>(i)];
        if (blockUses.empty()) b_.memset(acc, 0.0f, isa::Engine::Vector);
        multiplyPositions(acc.slice(0, 0, rows), blockUses, at, sub, slot, 0, rows);
        b_.setNote("evict pairs");
        copyOn(b_, pairs.select(0, i).slice(1, 0, cw),
               acc.split(0, {2, plan_.pairStride}).slice(1, 0, cw), evictEngines_.next());
      }
      defer(
          [=, this] {
            b_.setNote("transpose pairs");
            for (int g = 0; g < 2; ++g)
              b_.transpose(offsets[g].slice(0, offset, offset + n),
                           pairs.slice(0, 0, nq).select(1, g));
          },
          true);
    });
    const int64_t row0 = first[1];
    defer([=, this, &chunk] {
      const int64_t oddW = std::min(count[2], (chunk.extent[2] - first[2]) / 2);
      for (int64_t g = 0; g < 2; ++g) {
        const isa::Engine engine = evictEngines_.next();
        const Int3 extent{count[0], count[1], g == 0 ? count[2] : oddW};
        if (extent[2] == 0) continue;
        const Tile src = offsets[g].reshape({count[0], count[1], count[2]}).slice(2, 0, extent[2]);
        const Tile dst = box(outAll.partitionSlice(0, rowsUsed), {first[0], row0, first[2] + g},
                             extent, plan_.phase);
        evict(dst, src, 0, rowsUsed, engine);
      }
      storeGroup(outAll, chunk, g0, cw, first, count, nq);
    });
  }

  /// Stores the group of `nq` blocks from `first` (extent `count` output pairs per block):
  /// quadrant (or half) i holds block i's rows from the first block's row. One DMA when C_out
  /// fills them, else one per block, triggered from GpSimd (idle here; Scalar's 600 ns
  /// triggers held back its sub-block evictions and so the next transposes).
  void storeGroup(const Tile& outAll, const Chunk& chunk, int64_t co0, int64_t cw,
                  const Int3& first, const Int3& count, int32_t nq) {
    const int64_t d = chunk.origin[0] + first[0];
    const int64_t width = std::min(chunk.extent[2] - first[2], count[2] * plan_.phase[2]);
    const int64_t h0 = chunk.origin[1] + first[1], w0 = chunk.origin[2] + first[2];
    const HbmView rows = out_.select(0, chunk.batch)
                             .slice(0, co0, co0 + cw)
                             .select(1, d)
                             .slice(1, h0, h0 + nq * count[1])
                             .slice(2, w0, w0 + width)
                             .split(1, {nq, count[1]})
                             .permute({1, 0, 2, 3});
    const Int3 extent{1, count[1], width};
    const int32_t lane = static_cast<int32_t>(plan_.groupParts);
    const bool whole = cw == lane;
    b_.setNote("store out");
    for (int32_t i = 0; i < (whole ? 1 : nq); ++i) {
      const int32_t parts = whole ? nq * lane : static_cast<int32_t>(cw);
      const Tile src = outAll.partitionSlice(i * lane, parts);
      const HbmView dst = whole ? rows : rows.select(0, i);
      b_.dmaCopy(dst, box(src, {first[0], first[1], first[2]}, extent, {1, 1, 1}),
                 DmaOptions{-1, isa::Engine::GpSimd});
    }
  }

  /// Queues `work` behind the pending transposes (runs it now when none is pending); a
  /// `transpose` counts against the lag.
  void defer(std::function<void()> work, bool transpose = false) {
    deferred_.push_back({std::move(work), transpose});
    pendingTransposes_ += transpose ? 1 : 0;
    settle(transposeLag_);
  }

  /// Emits deferred work from the front until at most `lag` transposes are pending: TensorE
  /// multiplies the next sub-blocks while their predecessors are evicted.
  void settle(int lag) {
    while (!deferred_.empty() && (pendingTransposes_ > lag || !deferred_.front().transpose)) {
      Deferred next = std::move(deferred_.front());
      deferred_.pop_front();
      pendingTransposes_ -= next.transpose ? 1 : 0;
      next.work();
    }
  }

  /// The block at `origin` with positions as the stationary: per sub-block of at most one PE
  /// tile of output pairs (whole rows of the block, or pieces of one row), one matmul per live
  /// tap group into [pairs, (g, C_out)], an eviction, and (deferred) a PE transpose into the
  /// sub-block's columns of `ps` [(g, C_out), pairs] at partition `base` (0, or 64: then the
  /// result is evicted to columns from 64 and the transpose takes the zero columns before it).
  void accumulateByPositions(const Tile& ps, const Chunk& chunk, int64_t slot, const Int3& origin,
                             const Int3& count, int64_t coOffset, int64_t rows, int64_t base) {
    const std::vector<TapUse> uses = tapsFor(chunk, origin, count);
    b_.setNote("matmul");
    if (uses.empty())
      return b_.memset(ps.partitionSlice(static_cast<int32_t>(base), static_cast<int32_t>(rows)),
                       0.0f, isa::Engine::Vector);
    forEachSubBlock(count, [&](const Int3& at, const Int3& sub, int64_t offset) {
      const int64_t n = product(sub);
      const int32_t np = static_cast<int32_t>(n);
      const Tile acc = pairPsums_.next().partitionSlice(0, np).slice(0, 0, rows);
      multiplyPositions(acc, uses, at, sub, slot, coOffset, rows);
      const Tile pairs = pairTiles_.next().partitionSlice(0, np).slice(0, 0, base + rows);
      b_.setNote("evict pairs");
      copyOn(b_, pairs.slice(0, base, base + rows), acc, evictEngines_.next());
      defer(
          [=, this] {
            b_.setNote("transpose pairs");
            b_.transpose(ps.slice(0, offset, offset + n), pairs);
          },
          true);
    });
  }

  /// Sub-blocks of a block of `count` output pairs with positions as the stationary: whole rows
  /// of at most one PE tile of pairs, or tile-sized pieces of one row. `visit(at, sub, offset)`
  /// gets the sub-block's position in the block, its extent and its first block column.
  template <typename Visit>
  void forEachSubBlock(const Int3& count, Visit visit) const {
    const int64_t tile = plan_.parts;
    const int64_t perRow = std::min(count[2], tile);
    const int64_t rowsPer = count[2] > tile ? 1 : tile / count[2];
    for (int64_t d = 0; d < count[0]; ++d)
      for (int64_t h = 0; h < count[1]; h += rowsPer)
        for (int64_t w = 0; w < count[2]; w += perRow)
          visit(Int3{d, h, w},
                Int3{1, std::min(rowsPer, count[1] - h), std::min(perRow, count[2] - w)},
                (d * count[1] + h) * count[2] + w);
  }

  /// One sub-block's matmuls with positions as the stationary, sub-block at `at` of a block
  /// whose live tap groups are `uses`: stationary the window view [(slot, C_in), pairs], moving
  /// filter columns [c0, c0 + rows), into `acc` [pairs, rows].
  void multiplyPositions(const Tile& acc, const std::vector<TapUse>& uses, const Int3& at,
                         const Int3& sub, int64_t slot, int64_t c0, int64_t rows) {
    const int32_t parts = static_cast<int32_t>(plan_.parts);
    const Tile window = windows_[static_cast<int>(slot)].partitionSlice(0, parts).select(0, 0);
    const Tile filters = weights_.partitionSlice(0, parts).select(0, 0);
    const Int3 step{blockStep(0), blockStep(1), blockStep(2)};
    b_.setNote("matmul");
    for (size_t u = 0; u < uses.size(); ++u) {
      Int3 start;
      for (int a = 0; a < 3; ++a) start[a] = uses[u].start[a] + at[a] * step[a];
      b_.matmul(acc, box(window, windowAt(start), sub, step),
                filters.select(0, uses[u].stored).slice(0, c0, c0 + rows), u > 0);
    }
  }

  /// Stores depths [d0, d1) of `chunk` from `outAll`, output channels [co0, co0 + cw): one DMA,
  /// or one per plane when planes sit on rotating quadrants.
  void store(const Tile& outAll, const Chunk& chunk, int64_t co0, int64_t cw, int64_t d0,
             int64_t d1) {
    const int64_t perDma = quadrants_ > 1 ? 1 : d1 - d0;
    for (int64_t d = d0; d < d1; d += perDma) {
      const int64_t first = quadrants_ > 1 ? quadrantOf(chunk.origin[0] + d) * kQuadrant : 0;
      const HbmView dst = out_.select(0, chunk.batch)
                              .slice(0, co0, co0 + cw)
                              .slice(1, chunk.origin[0] + d, chunk.origin[0] + d + perDma)
                              .slice(2, chunk.origin[1], chunk.origin[1] + chunk.extent[1])
                              .slice(3, chunk.origin[2], chunk.origin[2] + chunk.extent[2]);
      const Int3 extent{perDma, chunk.extent[1], chunk.extent[2]};
      const Tile src = outAll.partitionSlice(static_cast<int32_t>(first), static_cast<int32_t>(cw));
      b_.setNote("store out");
      b_.dmaCopy(dst, box(src, {d, 0, 0}, extent, {1, 1, 1}), DmaOptions{-1, isa::Engine::Scalar});
    }
  }

  void accumulate(const Tile& ps, const Chunk& chunk, int64_t slot, const Int3& origin,
                  const Int3& count, int64_t coOffset, int64_t cw) {
    const std::vector<TapUse> uses = tapsFor(chunk, origin, count);
    const Int3 step{blockStep(0), blockStep(1), blockStep(2)};
    b_.setNote("matmul");
    if (uses.empty()) return b_.memset(ps, 0.0f, isa::Engine::Vector);
    // Dense windows: a tap skips the block's outputs at whose position it reads only padding
    // (a 3x3x3 pad 1 filter: 1 row of 16 for a third of the taps at the H border); a tap
    // covering the whole block goes first, as the matmul that starts the accumulation.
    const bool trim = plan_.pack == 1 && !plan_.perTap;
    std::vector<std::pair<Int3, Int3>> live;
    for (const TapUse& use : uses)
      live.push_back(trim ? liveBox(chunk, use, count) : std::pair{Int3{0, 0, 0}, count});
    const auto whole = std::find(live.begin(), live.end(), std::pair{Int3{0, 0, 0}, count});
    const size_t lead = whole == live.end() ? 0 : static_cast<size_t>(whole - live.begin());
    live[lead] = {Int3{0, 0, 0}, count};
    bool first = true;
    for (int64_t t = 0; t < plan_.ciTiles; ++t) {
      const int32_t cs = static_cast<int32_t>(plan_.pack > 1 ? plan_.parts : ciCount(t));
      const Tile windows = windows_[slot].partitionSlice(0, cs);
      const Tile filters = weights_.partitionSlice(0, cs).select(0, t);
      for (size_t n = 0; n < uses.size(); ++n) {
        const size_t u = n == 0 ? lead : n <= lead ? n - 1 : n;
        const TapUse& use = uses[u];
        const auto& [lo, hi] = live[u];
        Int3 start = use.start, extent;
        for (int a = 0; a < 3; ++a) {
          start[a] += lo[a] * step[a];
          extent[a] = hi[a] - lo[a];
        }
        const Tile moving = plan_.perTap ? box(windows.select(0, t * core_.tapCount() + use.index),
                                               origin, count, {1, 1, 1})
                                         : box(windows.select(0, t), windowAt(start), extent, step);
        const Tile dst = extent == count ? ps
                                         : box(ps.reshape({count[0], count[1], count[2]}), lo,
                                               extent, {1, 1, 1});
        b_.matmul(dst, filters.select(0, use.stored).slice(0, coOffset, coOffset + cw), moving,
                  !first);
        first = false;
      }
    }
  }

  /// The outputs of the block (from its origin, per axis [lo, hi)) at which tap `use` reads
  /// an x element; elsewhere it reads only padding (or inserted zeros).
  std::pair<Int3, Int3> liveBox(const Chunk& chunk, const TapUse& use, const Int3& count) const {
    Int3 lo{0, 0, 0}, hi = count;
    for (int a = 0; a < 3; ++a) {
      const int64_t z = chunk.origin[a] * core_.stride[a] + use.start[a];
      while (lo[a] < hi[a] && !holdsInput(a, z + lo[a] * blockStep(a), 1, 1)) ++lo[a];
      while (hi[a] > lo[a] && !holdsInput(a, z + (hi[a] - 1) * blockStep(a), 1, 1)) --hi[a];
    }
    return {lo, hi};
  }

  /// The odd W offset's outputs (PSUM rows from pairStride) of the block at `origin`, those that
  /// lie inside the chunk.
  void evictOdd(const Tile& outTile, const Tile& ps, const Chunk& chunk, const Int3& origin,
                const Int3& count, int64_t coTile, int64_t cw, isa::Engine engine) {
    Int3 odd = count;
    odd[2] = std::min(count[2], (chunk.extent[2] - origin[2]) / 2);
    if (odd[2] == 0) return;
    const Tile src =
        ps.partitionSlice(static_cast<int32_t>(plan_.pairStride), static_cast<int32_t>(cw))
            .reshape({count[0], count[1], count[2]})
            .slice(2, 0, odd[2]);
    evict(box(outTile, {origin[0], origin[1], origin[2] + 1}, odd, plan_.phase), src, coTile, cw,
          engine);
  }

  /// Evicts `ps` into `dst` on `engine` (Vector or Scalar), adding bias and applying the
  /// activation (on Scalar when Vector cannot).
  void evict(const Tile& dst, const Tile& ps, int64_t coTile, int64_t cw, isa::Engine engine) {
    b_.setNote("evict psum");
    const bool vector = engine == isa::Engine::Vector;
    std::optional<Tile> bias;
    if (bias_)
      bias = biasTile_.partitionSlice(0, static_cast<int32_t>(cw)).slice(0, coTile, coTile + 1);
    const isa::ActFn act = core_.act;
    if (vector && act == isa::ActFn::Copy && !bias)
      return b_.tensorCopy(dst, ps, isa::Engine::Vector);
    if (vector && act == isa::ActFn::Copy) return b_.tensorScalar(dst, ps, isa::AluOp::Add, *bias);
    if (vector && act == isa::ActFn::Relu) {
      const ScalarArg add = bias ? ScalarArg(*bias) : ScalarArg(0.0f);
      return b_.tensorScalar(dst, ps, isa::AluOp::Add, add, isa::AluOp::Max, 0.0f);
    }
    b_.activation(dst, ps, act, 1.0f, bias);
  }

  KernelBuilder& b_;
  const ConvCore& core_;
  ConvPlan plan_;
  isa::Dtype dtype_;
  HbmView x_, filters_;
  std::optional<HbmView> bias_;
  HbmView out_;
  Tile weights_, biasTile_;
  Tile pairedWeights_;  ///< plane pairs: [(slot, C_in), (Kd + 1) x rowColumns, pairedColumns]
  EngineCycle placeEngines_, evictEngines_, copyEngines_;
  EngineCycle filterIssue_{{isa::Engine::GpSimd, isa::Engine::Scalar}};
  BufferRing pairPsums_, pairTiles_;
  int64_t quadrants_ = 1;             ///< partition quadrants the out tile's planes rotate over
  int transposeLag_ = kTransposeLag;  ///< deferred transpose items behind the matmuls
  SlidingRing ring_;  ///< rolling planes: the window planes' ring positions per loaded item
  std::vector<int64_t> ringPlanes_;  ///< rolling planes: those of the chunk being computed
  /// slot copies of the ring loads per item, emitted one chunk ahead (`emitSlotCopies`)
  std::map<int64_t, std::vector<std::function<void()>>> pendingCopies_;
  int64_t loadingItem_ = 0;
  struct Deferred {
    std::function<void()> work;
    bool transpose;
  };
  std::deque<Deferred> deferred_;
  int pendingTransposes_ = 0;
  BufferRing windows_, stages_, outs_, psums_;
  std::function<void(int64_t, int64_t)> afterChunk_;
};

}  // namespace

void buildConv(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype, const HbmView& x,
               const HbmView& filters, const std::optional<HbmView>& bias, const HbmView& out,
               const ConvOptions& options) {
  ConvEmitter(builder, core, options, dtype, x, filters, bias, out).run();
}

}  // namespace neuronsim::kernels
