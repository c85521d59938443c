// Transposed conv with kernel = stride as phase matmuls: x as it lies, Kd phases stacked on
// the PE columns, outputs evicted into their phase positions and stored per phase group.

#include "kernels/conv/conv_transpose_phases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "kernels/builder/pipeline.h"
#include "kernels/builder/queue_spread.h"
#include "kernels/conv/conv_transpose_slabs.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kGroupBytes = 16 * 1024;  // per partition: the largest store group or x load
constexpr int64_t kBlockPositions = 256;    // matmul block (auto): one 16x16 plane
constexpr int kXSlots = 3;                  // x loads in flight
constexpr int kOutSlots = 4;                // store groups in flight
constexpr int64_t kFirstLoadBytes = 1024;   // per partition: the first x load (auto)
constexpr int64_t kMostXLoads = 64;         // x_loads range
constexpr int64_t kMostFirstStorePositions = 1 << 24;  // first_store_positions range
constexpr double kThrottledPeRate = 2.0 / 3;  // TensorE's mean rate over its throttled start
constexpr int kPsumBuffers = 8;               // a block's accumulator fits one bank: all 8 in turn
constexpr int64_t kBandsLeastPlanes = 4;      // auto bands: other planes at least (depth 5)

using Group = PhasePlan::Group;

/// The machine's DMA queues in quarters: x loads (Sync), stores from Sync, stores from GpSimd,
/// and the first queue of the last quarter for filters and bias (Scalar); with 16 queues 0-3,
/// 4-7, 8-11 and 12. With 3 queues every DMA takes its engine's default round robin; below 3
/// the engines would share the queues (a queue is fed by one engine only), so every DMA is
/// triggered from Sync.
struct PhaseQueues {
  explicit PhaseQueues(const isa::Geometry& geometry)
      : quarter(geometry.dmaQueues / 4), shared(geometry.dmaQueues < 3) {}
  DmaOptions load(int64_t ciTile) const {
    return on(static_cast<int32_t>(quarter > 0 ? ciTile % quarter : 0), isa::Engine::Sync);
  }
  DmaOptions filters() const { return on(3 * quarter, isa::Engine::Scalar); }
  /// Bands' start (at least 2 queues a quarter): the first DMA engine's filter rows and then the
  /// first x load from GpSimd (the last two queues of its quarter), the other filter rows from
  /// Sync (the last x-load queue).
  bool staggered() const { return quarter >= 2; }
  DmaOptions filtersHead() const { return {3 * quarter - 1, isa::Engine::GpSimd}; }
  DmaOptions firstLoad() const { return {3 * quarter - 2, isa::Engine::GpSimd}; }
  DmaOptions filtersRest() const { return {quarter - 1, isa::Engine::Sync}; }
  /// Stores triggered in turn from GpSimd and Sync, each over its quarter of the queues.
  DmaSpread stores() const {
    if (shared) return DmaSpread({{isa::Engine::Sync, QueueCycle({-1})}});
    if (quarter == 0)
      return DmaSpread(
          {{isa::Engine::GpSimd, QueueCycle({-1})}, {isa::Engine::Sync, QueueCycle({-1})}});
    return DmaSpread({{isa::Engine::GpSimd, QueueCycle::span(2 * quarter, quarter)},
                      {isa::Engine::Sync, QueueCycle::span(quarter, quarter)}});
  }

 private:
  DmaOptions on(int32_t queue, isa::Engine engine) const {
    if (quarter == 0) return {-1, shared ? isa::Engine::Sync : engine};
    return {queue, engine};
  }
  int32_t quarter;
  bool shared;
};

/// Splits `count` rows or planes between VectorE (first) and ScalarE by their PSUM-read rates:
/// one element per cycle each, so in the ratio of their clocks (whole MHz, so that the split
/// is exact integer arithmetic).
int64_t vectorPart(int64_t count, const isa::Geometry& geometry) {
  const int64_t vector = std::llround(geometry.vectorGhz * 1000);
  const int64_t scalar = std::llround(geometry.scalarGhz * 1000);
  return count < 2 ? 0 : std::clamp<int64_t>(count * vector / (vector + scalar), 1, count - 1);
}

class PhasePlanner {
 public:
  PhasePlanner(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
               const ConvOptions& options, const PhaseOptions& phase)
      : core_(core),
        phase_(phase),
        h_(core.in[1]),
        w_(core.in[2]),
        minColumns_(std::max<int64_t>(1, geometry.matmulMinCycles)) {
    const int64_t phases = core.tapCount(), most = geometry.matmulFreeFp32();
    blockPositions_ = options.chunkPositions > 0
                          ? std::clamp<int64_t>(options.chunkPositions / phases, w_, most)
                          : std::min(most, std::max(kBlockPositions, h_ * w_));
    planes_ = h_ * w_ <= blockPositions_;
    const int64_t parts = geometry.peTile(), coWidth = std::min(core.cout, parts);
    int64_t stack = 1;
    for (int64_t g = 1; g <= core.taps[0]; ++g)
      if (core.taps[0] % g == 0 && g * coWidth <= parts) stack = g;
    const int64_t outPlaneBytes = h_ * w_ * phases / stack * isa::dtypeBytes(dtype);
    const int64_t xPlaneBytes = h_ * w_ * isa::ceilDiv(core.cin, parts) * isa::dtypeBytes(dtype);
    storeCap_ = std::max<int64_t>(1, kGroupBytes / outPlaneBytes);
    const std::string& ramp = phase.storeRamp;
    grow_ = ramp == "grow" || (ramp != "flat" && !matmulBound(core, dtype, stack, geometry));
    loadCap_ = std::max<int64_t>(1, kGroupBytes / xPlaneBytes);
    const int64_t rest = core.in[0] - 1;
    const bool bandsFit = planes_ && rest >= 2 && h_ >= 3 && rest * outPlaneBytes <= kGroupBytes &&
                          rest * xPlaneBytes <= kGroupBytes;
    firstLoad_ = std::clamp<int64_t>(kFirstLoadBytes / xPlaneBytes, 1, loadCap_);
    bands_ = bandsFit && (ramp == "bands" ||
                          (ramp == "auto" && !matmulBound(core, dtype, stack, geometry, true) &&
                           bandsPay(core, geometry)));
    secondLoadCap_ = secondLoadCap(core, dtype, stack, geometry, firstLoad_);
    const std::string& layout = phase.outLayout;
    if ((layout == "slabs" || (layout == "auto" && slabsPay(core, dtype, geometry))) &&
        slabsFit(core, dtype, geometry))
      splits_ = slabSplits(core, geometry);
  }

  PhasePlan plan() {
    if (splits_ > 0) return slabPlan();
    PhasePlan p;
    p.bands = bands_;
    const int64_t depth = core_.in[0];
    if (!planes_) {  // rows of one plane per block, each its own load and store
      const int64_t nh = std::max<int64_t>(1, blockPositions_ / w_);
      for (int64_t b = 0; b < core_.batch; ++b)
        for (int64_t d = 0; d < depth; ++d)
          for (int64_t h = 0; h < h_; h += nh) {
            const PhaseSpan s{b, d, 1, h, std::min(nh, h_ - h)};
            const auto i = static_cast<int64_t>(p.blocks.size());
            p.blocks.push_back(s);
            p.loads.push_back({s, i, i + 1});
            p.stores.push_back({s, i, i + 1});
          }
      return p;
    }
    if (bands_) {
      for (int64_t b = 0; b < core_.batch; ++b) addBands(p, b);
      return p;
    }
    for (int64_t b = 0; b < core_.batch; ++b) {
      const std::set<int64_t> storeCuts = storeCutsOf(), loadCuts = loadCutsOf();
      std::set<int64_t> cuts = storeCuts;
      cuts.insert(loadCuts.begin(), loadCuts.end());
      int64_t storeFirst = static_cast<int64_t>(p.blocks.size()), loadFirst = storeFirst;
      int64_t storeRow = 0, loadRow = 0;
      const int64_t nd = std::max<int64_t>(1, blockPositions_ / (h_ * w_));
      for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
        const int64_t end = *std::next(it);
        const PhaseSpan s = spanOf(b, *it, end);
        if (s.nd == 1)
          p.blocks.push_back(s);
        else
          for (int64_t d = s.d0; d < s.d0 + s.nd; d += nd)
            p.blocks.push_back({b, d, std::min(nd, s.d0 + s.nd - d), 0, h_});
        const auto n = static_cast<int64_t>(p.blocks.size());
        if (storeCuts.count(end)) {
          p.stores.push_back({spanOf(b, storeRow, end), storeFirst, n});
          storeFirst = n, storeRow = end;
        }
        if (loadCuts.count(end)) {
          p.loads.push_back({spanOf(b, loadRow, end), loadFirst, n});
          loadFirst = n, loadRow = end;
        }
      }
    }
    return p;
  }

 private:
  /// Slabs: per batch one x load of all planes, blocks of whole split planes (rows of one plane
  /// when a plane exceeds a block) and one store of all.
  PhasePlan slabPlan() const {
    PhasePlan p;
    p.splits = splits_;
    const int64_t depth = core_.in[0] / splits_;
    for (int64_t b = 0; b < core_.batch; ++b) {
      const auto first = static_cast<int64_t>(p.blocks.size());
      if (planes_) {
        const int64_t nd = std::max<int64_t>(1, blockPositions_ / (h_ * w_));
        for (int64_t d = 0; d < depth; d += nd)
          p.blocks.push_back({b, d, std::min(nd, depth - d), 0, h_});
      } else {
        const int64_t nh = std::max<int64_t>(1, blockPositions_ / w_);
        for (int64_t d = 0; d < depth; ++d)
          for (int64_t h = 0; h < h_; h += nh)
            p.blocks.push_back({b, d, 1, h, std::min(nh, h_ - h)});
      }
      const auto last = static_cast<int64_t>(p.blocks.size());
      p.loads.push_back({{b, 0, core_.in[0], 0, h_}, first, last});
      p.stores.push_back({{b, 0, depth, 0, h_}, first, last});
    }
    return p;
  }

  /// Batch b as bands: the first plane in two store groups (the first `firstRows()` rows,
  /// then the rest) and one x load, then the other planes together in bands of rows: store
  /// groups of about 3/16, 5/16 and 8/16 of the rows (H 16: 3, 5, 8), x in two loads split
  /// inside the middle band. Every group and load is a box of whole rows.
  void addBands(PhasePlan& p, int64_t b) const {
    const int64_t rest = core_.in[0] - 1, first = firstRows();
    const int64_t last = h_ / 2;
    const int64_t head = std::max<int64_t>(1, std::llround(static_cast<double>(h_ - last) * 3 / 8));
    const int64_t split = head + (h_ - last - head) / 2;
    const std::vector<PhaseSpan> loads = {
        {b, 0, 1, 0, h_}, {b, 1, rest, 0, split}, {b, 1, rest, split, h_ - split}};
    std::vector<PhaseSpan> stores = {{b, 0, 1, 0, first}};
    if (first < h_) stores.push_back({b, 0, 1, first, h_ - first});
    stores.push_back({b, 1, rest, 0, head});
    stores.push_back({b, 1, rest, head, h_ - last - head});
    stores.push_back({b, 1, rest, h_ - last, last});
    std::vector<int64_t> loadFirst(loads.size(), -1), loadLast(loads.size(), 0);
    for (const PhaseSpan& store : stores) {
      const auto storeFirst = static_cast<int64_t>(p.blocks.size());
      for (size_t l = 0; l < loads.size(); ++l) {
        const PhaseSpan& load = loads[l];
        const int64_t d0 = std::max(store.d0, load.d0);
        const int64_t d1 = std::min(store.d0 + store.nd, load.d0 + load.nd);
        const int64_t h0 = std::max(store.h0, load.h0);
        const int64_t h1 = std::min(store.h0 + store.nh, load.h0 + load.nh);
        if (d0 >= d1 || h0 >= h1) continue;
        if (loadFirst[l] < 0) loadFirst[l] = static_cast<int64_t>(p.blocks.size());
        const PhaseSpan box{b, d0, d1 - d0, h0, h1 - h0};
        addBlocks(p, box, p.stores.empty() ? firstGroupBlock(box) : blockPositions_);
        loadLast[l] = static_cast<int64_t>(p.blocks.size());
      }
      p.stores.push_back({store, storeFirst, static_cast<int64_t>(p.blocks.size())});
    }
    for (size_t l = 0; l < loads.size(); ++l)
      p.loads.push_back({loads[l], loadFirst[l], loadLast[l]});
  }

  /// Block positions of the plan's first store group `s`: two blocks of half its rows when each
  /// keeps at least the matmul floor's moving columns (a narrower matmul costs the floor, I2),
  /// so the first half is evicted while TensorE runs the second and the last eviction, which
  /// the first store waits for, is half as long (benchmark 10.821 -> 10.796 us, depth 5 8.642
  /// -> 8.526); else blockPositions_.
  int64_t firstGroupBlock(const PhaseSpan& s) const {
    if (s.nh / 2 * s.nd * w_ < minColumns_) return blockPositions_;
    return std::min(blockPositions_, isa::ceilDiv(s.nh, 2) * s.nd * w_);
  }

  /// Matmul blocks of box `s`, each within `most` positions: the whole box, else bands of rows
  /// across its planes, else groups of whole planes.
  void addBlocks(PhasePlan& p, const PhaseSpan& s, int64_t most) const {
    auto evenly = [](int64_t count, int64_t most) {
      const int64_t chunks = isa::ceilDiv(count, std::max<int64_t>(1, most));
      return isa::ceilDiv(count, chunks);
    };
    if (s.nd * w_ <= most) {
      const int64_t nh = evenly(s.nh, most / (s.nd * w_));
      for (int64_t h = s.h0; h < s.h0 + s.nh; h += nh)
        p.blocks.push_back({s.b, s.d0, s.nd, h, std::min(nh, s.h0 + s.nh - h)});
      return;
    }
    const int64_t nd = evenly(s.nd, most / (s.nh * w_));
    for (int64_t d = s.d0; d < s.d0 + s.nd; d += nd)
      p.blocks.push_back({s.b, d, std::min(nd, s.d0 + s.nd - d), s.h0, s.nh});
  }

  /// True when auto takes bands over grow (measured on trn2, docs/conv.md convt-10): x_loads
  /// auto (bands fix their loads), one batch (grow's groups keep growing across batches), at
  /// least kBandsLeastPlanes other planes (fewer
  /// make bands of a few hundred bytes per partition, each paying a transfer's overhead), an auto
  /// first x load of 2 planes or more (bands start from one plane; with larger planes grow does
  /// too, and bands only add x loads), and DMA engines that together keep up with the HBM share
  /// (else the two x loads of 7 planes land late: trn1's 16 x 17 B/ns against 410 GB/s).
  bool bandsPay(const ConvCore& core, const isa::Geometry& geometry) const {
    return phase_.xLoads == 0 && core.batch == 1 && core.in[0] - 1 >= kBandsLeastPlanes &&
           firstLoad_ >= 2 && geometry.dmaBytesPerPeCycle > 0 &&
           geometry.dmaBytesPerPeCycle >= geometry.hbmBytesPerPeCycle;
  }

  /// Rows of the first store group: first_store_positions, auto half a plane.
  int64_t firstRows() const {
    if (phase_.firstStorePositions <= 0) return isa::ceilDiv(h_, 2);
    return std::clamp<int64_t>(phase_.firstStorePositions / (core_.tapCount() * w_), 1, h_);
  }

  /// True when the matmuls take over 70% of the memory time: PE cycles (one per moving column,
  /// times the machine's fp32 factor with fp32) against the HBM bytes at the machine's HBM bytes
  /// per PE cycle, and with `byEngine` also against the busiest DMA engine's bytes at its share
  /// of dmaBytesPerPeCycle (a scheduling heuristic, not the cost model; false when the geometry
  /// does not know the ratios).
  static bool matmulBound(const ConvCore& core, isa::Dtype dtype, int64_t stack,
                          const isa::Geometry& geometry, bool byEngine = false) {
    if (geometry.hbmBytesPerPeCycle <= 0) return false;
    const int64_t parts = geometry.peTile();
    const int64_t positions = core.batch * core.in[0] * core.in[1] * core.in[2];
    const double perColumn = dtype == isa::Dtype::Fp32 ? geometry.fp32MatmulFactor : 1.0;
    const int64_t ciTiles = isa::ceilDiv(core.cin, parts), coTiles = isa::ceilDiv(core.cout, parts);
    const int64_t columns = core.tapCount() / stack * coTiles * ciTiles;
    const int64_t bytes = isa::dtypeBytes(dtype);
    const int64_t hbmBytes = (positions * (core.cin + core.tapCount() * core.cout) +
                              core.tapCount() * core.cin * core.cout) *
                             bytes;
    double memoryCycles = static_cast<double>(hbmBytes) / geometry.hbmBytesPerPeCycle;
    if (byEngine && geometry.dmaBytesPerPeCycle > 0)
      memoryCycles = std::max(memoryCycles, busiestDmaEngineElements(core, stack, geometry) *
                                                static_cast<double>(bytes) * geometry.dmaEngines /
                                                geometry.dmaBytesPerPeCycle);
    return static_cast<double>(positions * columns) * perColumn > 0.7 * memoryCycles;
  }

  /// Elements the first (busiest) DMA engine moves: it serves partitions [0, partitions /
  /// dmaEngines) (D1), each holding x, filters and outputs: x and filters of each C_in tile,
  /// outputs of each C_out tile and kd group. Outputs on fewer partitions than x (C_out 32
  /// stacked twice: 64) go through fewer engines, which then carry the kernel's store stream.
  static double busiestDmaEngineElements(const ConvCore& core, int64_t stack,
                                         const isa::Geometry& geometry) {
    const int64_t parts = geometry.peTile();
    const int64_t perEngine = geometry.partitionsPerDmaEngine();
    const int64_t positions = core.batch * core.in[0] * core.in[1] * core.in[2];
    const int64_t ciTiles = isa::ceilDiv(core.cin, parts), coTiles = isa::ceilDiv(core.cout, parts);
    const int64_t xParts = std::min(perEngine, std::min(core.cin, parts));
    const int64_t outParts = std::min(perEngine, stack * std::min(core.cout, parts));
    return static_cast<double>(xParts * ciTiles * (positions + core.tapCount() * core.cout) +
                               outParts * coTiles * positions * (core.tapCount() / stack));
  }

  /// Planes of x that move while TensorE works through `first` planes, the second x load's
  /// most (0: no cap): PE cycles per plane (one per moving column, the fp32 factor with fp32)
  /// at the throttled start's rate against a plane's HBM bytes at the machine's HBM bytes per
  /// PE cycle (a scheduling estimate; 0 when the geometry does not know the ratio).
  static int64_t secondLoadCap(const ConvCore& core, isa::Dtype dtype, int64_t stack,
                               const isa::Geometry& geometry, int64_t first) {
    if (geometry.hbmBytesPerPeCycle <= 0) return 0;
    const int64_t parts = geometry.peTile(), plane = core.in[1] * core.in[2];
    const double perColumn = dtype == isa::Dtype::Fp32 ? geometry.fp32MatmulFactor : 1.0;
    const double peCycles =
        static_cast<double>(core.tapCount() / stack * plane * isa::ceilDiv(core.cout, parts) *
                            isa::ceilDiv(core.cin, parts)) *
        perColumn / kThrottledPeRate;
    const double dmaCycles = static_cast<double>(core.cin * plane * isa::dtypeBytes(dtype)) /
                             geometry.hbmBytesPerPeCycle;
    return std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(first) * peCycles / dmaCycles));
  }

  /// Rows [r0, r1) of batch b (row = d * H + h): part of one plane, or whole planes.
  PhaseSpan spanOf(int64_t b, int64_t r0, int64_t r1) const {
    if (r0 / h_ == (r1 - 1) / h_) return {b, r0 / h_, 1, r0 % h_, r1 - r0};
    return {b, r0 / h_, (r1 - r0) / h_, 0, h_};
  }

  /// Store group ends (rows) of one batch: the first group `first_store_positions` (auto half
  /// a plane), then each group as large as all stored before it (across batches; one plane
  /// each when not growing), within the plane until it is complete, then whole planes up to
  /// storeCap_.
  std::set<int64_t> storeCutsOf() {
    const int64_t rows = core_.in[0] * h_;
    const int64_t first = firstRows();
    std::set<int64_t> cuts{0};
    for (int64_t r = 0; r < rows;) {
      const int64_t want = stored_ == 0 ? first : grow_ ? stored_ : h_;
      int64_t g;
      if (r % h_ != 0 || want < h_)
        g = std::min(want, h_ - r % h_);
      else
        g = std::min({want / h_, storeCap_, (rows - r) / h_}) * h_;
      r += g, stored_ += g;
      cuts.insert(r);
    }
    return cuts;
  }

  /// x load ends (rows) of one batch, each load at most loadCap_ planes. x_loads N: N loads
  /// of 1, 2, 4.. planes, the last taking the rest; auto: 2 planes, half the rest, the rest
  /// (the later loads stay ahead of the matmuls without a large last load).
  std::set<int64_t> loadCutsOf() const {
    const int64_t depth = core_.in[0];
    std::vector<int64_t> sizes;
    if (phase_.xLoads > 0) {
      for (int64_t size = 1, d = 0; d < depth; size *= 2) {
        const int64_t n =
            static_cast<int64_t>(sizes.size()) + 1 >= phase_.xLoads ? depth - d : size;
        sizes.push_back(std::min(n, depth - d));
        d += sizes.back();
      }
    } else {
      const int64_t first = std::min(firstLoad_, depth);
      int64_t second = isa::ceilDiv(depth - first, 2);
      if (secondLoadCap_ > 0 && second > secondLoadCap_ &&
          depth - first - secondLoadCap_ <= 2 * secondLoadCap_)
        second = secondLoadCap_;
      sizes = {first, second, depth - first - second};
    }
    std::set<int64_t> cuts{0};
    int64_t d = 0;
    for (int64_t size : sizes)
      for (int64_t left = size; left > 0;) {
        const int64_t n = std::min(left, loadCap_);
        left -= n, d += n;
        cuts.insert(d * h_);
      }
    return cuts;
  }

  const ConvCore& core_;
  PhaseOptions phase_;
  int64_t h_, w_;
  int64_t blockPositions_ = 0;
  int64_t minColumns_ = 1;  ///< the matmul floor's moving columns (mm_min_cycles)
  bool planes_ = true;
  int64_t storeCap_ = 1, loadCap_ = 1;
  int64_t firstLoad_ = 1;      ///< planes of the first x load (auto)
  int64_t secondLoadCap_ = 0;  ///< most planes of the second x load (auto; 0: none)
  bool grow_ = true;           ///< store groups grow (memory-bound); else one plane each
  bool bands_ = false;         ///< the first plane, then the other planes in bands of rows
  int64_t splits_ = 0;         ///< slab layout's depth splits (0: phase layout)
  int64_t stored_ = 0;         ///< rows stored by earlier groups (all batches)
};

class PhaseEmitter {
 public:
  PhaseEmitter(KernelBuilder& b, const ConvCore& core, const ConvOptions& options, isa::Dtype dtype,
               const HbmView& x, const HbmView& filters, const std::optional<HbmView>& bias,
               const HbmView& out, const PhaseOptions& phase)
      : b_(b),
        core_(core),
        options_(options),
        dtype_(dtype),
        x_(x),
        filters_(filters),
        bias_(bias),
        out_(out),
        parts_(b.geometry().peTile()),
        queues_(b.geometry()),
        storeSpread_(queues_.stores()),
        plan_(planPhases(core, dtype, b.geometry(), options, phase)) {
    const int64_t coWidth = std::min(core_.cout, parts_);
    for (int64_t g = 1; g <= core_.taps[0]; ++g)
      if (core_.taps[0] % g == 0 && g * coWidth <= parts_) stack_ = g;
    if (plan_.splits > 0) stack_ = 1;
  }

  void run() {
    allocate();
    loadFilters();
    size_t load = 0, emitted = 0;
    for (const Group& store : plan_.stores) {
      // Loads of this group stay live through all its C_out tiles: load ahead only into slots
      // none of them uses.
      while (plan_.loads[load].last <= store.first) ++load;
      size_t last = load;
      while (plan_.loads[last].last < store.last) ++last;
      const size_t ahead = std::max(last + 1, std::min(plan_.loads.size(), load + windows_.size()));
      for (; emitted < ahead; ++emitted) loadGroup(emitted);
      for (int64_t co0 = 0; co0 < core_.cout; co0 += parts_) {
        const int64_t cw = std::min(parts_, core_.cout - co0);
        const Tile outTile = outs_.next()
                                 .partitionSlice(0, outRows(cw))
                                 .slice(0, 0, store.span.nd)
                                 .slice(2, 0, store.span.nh * core_.taps[1]);
        size_t l = load;
        for (int64_t i = store.first; i < store.last; ++i) {
          while (plan_.loads[l].last <= i) ++l;
          computeBlock(plan_.blocks[static_cast<size_t>(i)], l, store.span, outTile, co0, cw);
        }
        if (plan_.splits > 0)
          storeSlabs(store.span, outTile, co0, cw);
        else
          storeGroup(store.span, outTile, co0, cw);
      }
    }
    b_.release(weights_);
    if (bias_) b_.release(biasTile_);
    if (plan_.splits > 1) b_.release(padded_);
    for (BufferRing* ring : {&windows_, &outs_, &psums_}) ring->release(b_);
  }

 private:
  void allocate() {
    const Int3& k = core_.taps;
    const int64_t w = core_.in[2];
    int64_t loadNd = 1, loadNh = 1, storeNd = 1, storeNh = 1, most = 1;
    for (const Group& g : plan_.loads)
      loadNd = std::max(loadNd, g.span.nd), loadNh = std::max(loadNh, g.span.nh);
    for (const Group& g : plan_.stores)
      storeNd = std::max(storeNd, g.span.nd), storeNh = std::max(storeNh, g.span.nh);
    for (const PhaseSpan& s : plan_.blocks) most = std::max(most, s.nd * s.nh * w);
    // A store group's loads must all fit the ring at once.
    size_t span = 1;
    for (const Group& s : plan_.stores) {
      size_t n = 0;
      for (const Group& l : plan_.loads) n += l.first < s.last && l.last > s.first ? 1 : 0;
      span = std::max(span, n);
    }
    const int64_t ciTiles = isa::ceilDiv(core_.cin, parts_);
    const int xRing = plan_.splits > 0 ? kSlabSlots : kXSlots;
    const int outRing = plan_.splits > 0 ? kSlabSlots : kOutSlots;
    const auto xSlots =
        static_cast<int>(std::max<size_t>(span, std::min<size_t>(plan_.loads.size(), xRing)));
    const auto outSlots = static_cast<int>(std::min<int64_t>(
        static_cast<int64_t>(plan_.stores.size()) * isa::ceilDiv(core_.cout, parts_), outRing));
    weights_ = b_.sbuf({std::min(core_.cin, parts_), ciTiles, k[1], k[2], k[0], core_.cout}, dtype_,
                       "filters");
    windows_ = BufferRing::sbuf(
        b_, xSlots, {std::min(core_.cin, parts_), ciTiles, loadNd, loadNh, w}, dtype_, "x_block");
    outs_ =
        BufferRing::sbuf(b_, outSlots, {parts_, storeNd, k[0] / stack_, storeNh * k[1], w * k[2]},
                         out_.dtype(), "out");
    if (plan_.splits > 1)
      padded_ = b_.sbuf({std::min(core_.cin, parts_), ciTiles * k[1] * k[2] * k[0], plan_.splits,
                         core_.cout, plan_.splits},
                        dtype_, "filters_padded");
    const int psumBuffers =
        options_.psumBuffers > 0 ? static_cast<int>(options_.psumBuffers) : kPsumBuffers;
    // One bank per accumulator when they all fit: VectorE and ScalarE evicting two blocks
    // never read one bank at once (A2).
    const int64_t bank = b_.geometry().psumBankBytes() / 4;
    const int64_t width = most <= bank && psumBuffers <= b_.geometry().psumBanks ? bank : most;
    psums_ = BufferRing::psum(b_, psumBuffers, {parts_, width}, isa::Dtype::Fp32, "acc");
  }

  int64_t ciCount(int64_t t) const { return std::min(parts_, core_.cin - t * parts_); }

  /// Output partitions of a C_out tile of `cw` channels: stacked kd groups, or slab splits.
  int32_t outRows(int64_t cw) const {
    return static_cast<int32_t>((plan_.splits > 0 ? plan_.splits : stack_) * cw);
  }

  /// Stored tap of output phase r along `axis` (and the phase of stored tap r): the core's tap
  /// t = K-1-r reads stored tap t, or K-1-t when taps are flipped.
  int64_t storedOf(int axis, int64_t r) const {
    return core_.flipTaps ? r : core_.taps[axis] - 1 - r;
  }

  /// True when bands start staggered: the first x load (one plane) is posted a GpSimd trigger
  /// after the filters, so both land together instead of its transfer overhead holding the
  /// filters back on every DMA engine (first matmul 2.07 -> 1.94 us on the benchmark).
  bool staggered() const {
    return plan_.bands && queues_.staggered() && b_.geometry().dmaEngines > 1 &&
           b_.geometry().partitionsPerDmaEngine() < ciCount(0);
  }

  /// Filters as [ci, C_in tile, kh, kw, kd, co] (stored taps): a group of `stack_` kd taps
  /// are adjacent columns of one stationary. One DMA per C_in tile, triggered from ScalarE so
  /// it overlaps the first x load's trigger on Sync; staggered, C_in tile 0 as the first DMA
  /// engine's rows from GpSimd (its trigger delays the first x load's) and the rest from Sync
  /// (each DMA engine still moves one filter transfer).
  void loadFilters() {
    b_.setNote("load filters");
    const DmaOptions onScalar = queues_.filters();
    const int64_t head = staggered() ? b_.geometry().partitionsPerDmaEngine() : 0;
    for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
      const int64_t ci0 = t * parts_, cs = ciCount(t);
      auto rows = [&](int64_t p0, int64_t p1, const DmaOptions& on) {
        b_.dmaCopy(weights_.partitionSlice(static_cast<int32_t>(p0), static_cast<int32_t>(p1 - p0))
                       .select(0, t)
                       .permute({2, 0, 1, 3}),
                   filters_.slice(3, ci0 + p0, ci0 + p1).permute({3, 0, 1, 2, 4}), on);
      };
      if (head == 0) {
        rows(0, cs, onScalar);
        continue;
      }
      if (t == 0) rows(0, head, queues_.filtersHead());
      rows(t == 0 ? head : 0, cs, queues_.filtersRest());
    }
    if (plan_.splits > 1) padFilters();
    if (!bias_) return;
    const int64_t coTiles = isa::ceilDiv(core_.cout, parts_);
    biasTile_ = b_.sbuf({parts_, coTiles}, isa::Dtype::Fp32, "bias");
    for (int64_t j = 0; j < coTiles; ++j) {
      const int64_t co0 = j * parts_, cw = std::min(parts_, core_.cout - co0);
      if (plan_.splits > 0) {  // partition co * splits + h: bias[co], each read `splits` times
        const HbmView b = bias_->slice(0, co0, co0 + cw);
        b_.dmaCopy(biasTile_.partitionSlice(0, outRows(cw)).slice(0, j, j + 1),
                   HbmView(b.tensor(), b.dtype(), b.layout().broadcast(1, plan_.splits), b.name()),
                   onScalar);
        continue;
      }
      for (int64_t g = 0; g < stack_; ++g)
        b_.dmaCopy(biasTile_.partitionSlice(static_cast<int32_t>(g * cw), static_cast<int32_t>(cw))
                       .slice(0, j, j + 1),
                   bias_->slice(0, co0, co0 + cw).reshape({cw, 1}), onScalar);
    }
  }

  /// Slab stationaries: split h's copy of the filters [ci, tap, co] in columns co * splits + h,
  /// zeros in the others (GpSimd memset and copies), so split h's matmuls write partitions
  /// co * splits + h and add zeros to the other splits' accumulations.
  void padFilters() {
    b_.setNote("pad filters");
    b_.memset(padded_, 0.0f, isa::Engine::GpSimd);
    for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
      const int32_t cs = static_cast<int32_t>(ciCount(t));
      const int64_t taps = core_.tapCount();
      const Tile src = weights_.partitionSlice(0, cs).select(0, t).merge(0, 2);
      for (int64_t h = 0; h < plan_.splits; ++h)
        b_.tensorCopy(padded_.partitionSlice(0, cs)
                          .slice(0, t * taps, (t + 1) * taps)
                          .select(1, h)
                          .select(2, h),
                      src, isa::Engine::GpSimd);
    }
  }

  /// One DMA per C_in tile from Sync, C_in tile t on queue t mod 4: a queue's loads move one
  /// after the other on each DMA engine, so a later load does not share the engines with the
  /// filters and the first load (it still waits out its latency behind the one before).
  void loadGroup(size_t index) {
    b_.setNote("load x");
    const PhaseSpan& s = plan_.loads[index].span;
    for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
      const int64_t ci0 = t * parts_, cs = ciCount(t);
      const Tile dst = windows_[static_cast<int64_t>(index)]
                           .partitionSlice(0, static_cast<int32_t>(cs))
                           .select(0, t)
                           .slice(0, 0, s.nd)
                           .slice(1, 0, s.nh);
      b_.dmaCopy(dst,
                 x_.select(0, s.b)
                     .slice(0, ci0, ci0 + cs)
                     .slice(1, s.d0, s.d0 + s.nd)
                     .slice(2, s.h0, s.h0 + s.nh),
                 index == 0 && staggered() ? queues_.firstLoad() : queues_.load(t));
    }
  }

  /// Where a block sits: its first depth and row in its load's window, and its part of the
  /// store's out tile.
  struct BlockPlace {
    int64_t dIn, hIn;
    Tile window, blockOut;
  };

  void computeBlock(const PhaseSpan& blk, size_t load, const PhaseSpan& store, const Tile& outTile,
                    int64_t co0, int64_t cw) {
    const Int3& k = core_.taps;
    const PhaseSpan& in = plan_.loads[load].span;
    const int64_t dOut = blk.d0 - store.d0, hOut = blk.h0 - store.h0;
    const BlockPlace place{
        blk.d0 - in.d0, blk.h0 - in.h0, windows_[static_cast<int64_t>(load)],
        outTile.slice(0, dOut, dOut + blk.nd).slice(2, hOut * k[1], (hOut + blk.nh) * k[1])};
    if (plan_.splits > 0) return computeSlabBlock(blk, place, co0, cw);
    const auto& [dIn, hIn, window, blockOut] = place;
    const int64_t w = core_.in[2], n = blk.nd * blk.nh * w;
    const int32_t rows = static_cast<int32_t>(stack_ * cw);
    for (int64_t q = 0; q < k[0] / stack_; ++q)
      for (int64_t rh = 0; rh < k[1]; ++rh)
        for (int64_t rw = 0; rw < k[2]; ++rw) {
          const Tile ps = psums_.next().partitionSlice(0, rows).slice(0, 0, n);
          b_.setNote("matmul");
          for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
            const int32_t cs = static_cast<int32_t>(ciCount(t));
            const Tile taps = weights_.partitionSlice(0, cs)
                                  .select(0, t)
                                  .select(0, storedOf(1, rh))
                                  .select(0, storedOf(2, rw))
                                  .slice(0, q * stack_, (q + 1) * stack_)
                                  .slice(1, co0, co0 + cw);
            const Tile stationary = stack_ == 1 ? taps.select(0, 0) : taps.merge(0, 1);
            const Tile moving = window.partitionSlice(0, cs)
                                    .select(0, t)
                                    .slice(0, dIn, dIn + blk.nd)
                                    .slice(1, hIn, hIn + blk.nh);
            b_.matmul(ps, stationary, moving, t > 0);  // moving [d, h, w]: columns in order
          }
          const Tile dst =
              blockOut.select(1, q).slice(1, rh, blk.nh * k[1], k[1]).slice(2, rw, w * k[2], k[2]);
          evictBlock(dst, ps.reshape({blk.nd, blk.nh, w}), co0 / parts_, cw);
        }
  }

  /// Slab block: per output phase (kd, kh, kw) one accumulation over the splits and C_in tiles,
  /// split h's matmul moving x planes h * D / splits + the block's (its stationary's nonzero
  /// columns: partitions co * splits + h), then the eviction into the out tile [partitions,
  /// split plane, kd, H*Kh, W*Kw], which is the output channel's slab in HBM order.
  void computeSlabBlock(const PhaseSpan& blk, const BlockPlace& place, int64_t co0, int64_t cw) {
    const Int3& k = core_.taps;
    const auto& [dIn, hIn, window, blockOut] = place;
    const int64_t w = core_.in[2], n = blk.nd * blk.nh * w, splits = plan_.splits;
    const int64_t depth = core_.in[0] / splits, taps = core_.tapCount();
    for (int64_t rd = 0; rd < k[0]; ++rd)
      for (int64_t rh = 0; rh < k[1]; ++rh)
        for (int64_t rw = 0; rw < k[2]; ++rw) {
          const Tile ps = psums_.next().partitionSlice(0, outRows(cw)).slice(0, 0, n);
          const int64_t tap = (storedOf(1, rh) * k[2] + storedOf(2, rw)) * k[0] + storedOf(0, rd);
          b_.setNote("matmul");
          for (int64_t h = 0; h < splits; ++h)
            for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
              const int32_t cs = static_cast<int32_t>(ciCount(t));
              const Tile stationary = splits > 1 ? padded_.partitionSlice(0, cs)
                                                       .select(0, t * taps + tap)
                                                       .select(0, h)
                                                       .slice(0, co0, co0 + cw)
                                                       .merge(0, 1)
                                                 : weights_.partitionSlice(0, cs)
                                                       .select(0, t)
                                                       .select(0, storedOf(1, rh))
                                                       .select(0, storedOf(2, rw))
                                                       .select(0, storedOf(0, rd))
                                                       .slice(0, co0, co0 + cw);
              const int64_t d0 = h * depth + dIn;
              const Tile moving = window.partitionSlice(0, cs)
                                      .select(0, t)
                                      .slice(0, d0, d0 + blk.nd)
                                      .slice(1, hIn, hIn + blk.nh);
              b_.matmul(ps, stationary, moving, h > 0 || t > 0);
            }
          const Tile dst =
              blockOut.select(1, rd).slice(1, rh, blk.nh * k[1], k[1]).slice(2, rw, w * k[2], k[2]);
          evictBlock(dst, ps.reshape({blk.nd, blk.nh, w}), co0 / parts_, cw);
        }
  }

  /// The phases of one plane interleave element by element, so each engine evicts whole
  /// planes, or whole rows of a single-plane block: the two byte ranges stay disjoint (the
  /// builder tracks a byte range per partition). evict_engine auto splits planes (else rows)
  /// between VectorE and ScalarE in their clock ratio (4 : 5 on trn2); where their PSUM reads
  /// serialize (NC-v2 access conflicts, trn1) ScalarE, the faster one, evicts everything.
  void evictBlock(const Tile& dst, const Tile& result, int64_t coTile, int64_t cw) {
    if (options_.evict != "auto" || b_.geometry().accessConflicts)
      return evict(dst, result, coTile, cw,
                   options_.evict == "vector" ? isa::Engine::Vector : isa::Engine::Scalar);
    if (plan_.bands)
      return evict(dst, result, coTile, cw,
                   bankEngine(result.shape()[0] * result.shape()[1] * result.shape()[2]));
    const int axis = result.shape()[0] > 1 ? 0 : 1;
    const int64_t count = result.shape()[static_cast<size_t>(axis)];
    const int64_t split = vectorPart(count, b_.geometry());
    if (split == 0) return evict(dst, result, coTile, cw, alternate_.next());
    evict(dst.slice(axis, 0, split), result.slice(axis, 0, split), coTile, cw, isa::Engine::Vector);
    evict(dst.slice(axis, split, count), result.slice(axis, split, count), coTile, cw,
          isa::Engine::Scalar);
  }

  /// Bands evict whole blocks (one PSUM bank each), so VectorE and ScalarE never read one bank
  /// at once: each block goes to the engine that would finish its share of the work first, one
  /// element per cycle at the machine's clocks (ties to ScalarE).
  isa::Engine bankEngine(int64_t elements) {
    const auto n = static_cast<double>(elements);
    const double vector = vectorNs_ + n / b_.geometry().vectorGhz;
    const double scalar = scalarNs_ + n / b_.geometry().scalarGhz;
    if (vector < scalar) return vectorNs_ = vector, isa::Engine::Vector;
    return scalarNs_ = scalar, isa::Engine::Scalar;
  }

  void evict(const Tile& dst, const Tile& ps, int64_t coTile, int64_t cw, isa::Engine engine) {
    b_.setNote("evict psum");
    std::optional<Tile> bias;
    if (bias_) bias = biasTile_.partitionSlice(0, outRows(cw)).slice(0, coTile, coTile + 1);
    if (engine == isa::Engine::Vector && core_.act == isa::ActFn::Copy) {
      if (bias) return b_.tensorScalar(dst, ps, isa::AluOp::Add, *bias);
      return b_.tensorCopy(dst, ps, isa::Engine::Vector);
    }
    b_.activation(dst, ps, core_.act, 1.0f, bias);
  }

  /// One DMA per kd tap: partition group g of tap group q holds stored kd q*stack + g, the
  /// output depths s*i + its phase. Triggered in turn from GpSimd and Sync (their quarters
  /// of the queues, PhaseQueues::stores), so the two partition halves' stores start together (two
  /// triggers on one engine would start the second one's 1.3 us latency a trigger later).
  void storeGroup(const PhaseSpan& s, const Tile& outTile, int64_t co0, int64_t cw) {
    b_.setNote("store out");
    const Int3& k = core_.taps;
    const HbmView depths = out_.select(0, s.b)
                               .slice(0, co0, co0 + cw)
                               .split(1, {core_.in[0], k[0]})
                               .slice(1, s.d0, s.d0 + s.nd)
                               .slice(3, s.h0 * k[1], (s.h0 + s.nh) * k[1]);
    for (int64_t q = 0; q < k[0] / stack_; ++q)
      for (int64_t g = 0; g < stack_; ++g) {
        b_.dmaCopy(depths.select(2, storedOf(0, q * stack_ + g)),
                   outTile.partitionSlice(static_cast<int32_t>(g * cw), static_cast<int32_t>(cw))
                       .select(1, q),
                   storeSpread_.next());
      }
  }

  /// Slabs: one DMA for the C_out tile's channels of batch s.b, partition co * splits + h
  /// writing output depths [h, h + 1) x D_out / splits of channel co (one HBM range).
  void storeSlabs(const PhaseSpan& s, const Tile& outTile, int64_t co0, int64_t cw) {
    b_.setNote("store out");
    const Int3& k = core_.taps;
    const int64_t planes = core_.in[0] / plan_.splits;
    b_.dmaCopy(out_.select(0, s.b)
                   .slice(0, co0, co0 + cw)
                   .reshape({outRows(cw), planes, k[0], core_.in[1] * k[1], core_.in[2] * k[2]}),
               outTile, storeSpread_.next());
  }

  KernelBuilder& b_;
  const ConvCore& core_;
  ConvOptions options_;
  isa::Dtype dtype_;
  HbmView x_, filters_;
  std::optional<HbmView> bias_;
  HbmView out_;
  int64_t parts_;
  PhaseQueues queues_;
  DmaSpread storeSpread_;
  PhasePlan plan_;
  int64_t stack_ = 1;  ///< Kd phases side by side on the PE columns
  EngineCycle alternate_{{isa::Engine::Vector, isa::Engine::Scalar}};
  double vectorNs_ = 0, scalarNs_ = 0;  ///< eviction work given to each engine (bands)
  Tile weights_, biasTile_, padded_;
  BufferRing windows_, outs_, psums_;
};

}  // namespace

bool transposePhasesApply(const ConvCore& core, const isa::Geometry& geometry) {
  if (core.filtersCoCi || core.in[2] > geometry.matmulFreeFp32()) return false;
  for (int a = 0; a < 3; ++a) {
    if (core.stride[a] != 1 || core.dilation[a] != 1 || core.inputDilation[a] != core.taps[a] ||
        core.padLo[a] != core.taps[a] - 1 || core.out[a] != core.in[a] * core.taps[a])
      return false;
  }
  return core.tapCount() > 1;
}

std::vector<ParamSpec> phaseScheduleParams() {
  return {
      scheduleParam("first_store_positions", ParamType::Int,
                    "kernel = stride path: output positions of the first store group, "
                    "1..16777216 (auto: half an input plane's outputs); later groups follow "
                    "store_ramp",
                    {"1024", "2048", "4096"})
          .within(1, kMostFirstStorePositions),
      scheduleParam("x_loads", ParamType::Int,
                    "kernel = stride path: x loads per batch, 1..64, of 1, 2, 4.. planes, the "
                    "last taking the rest (auto: about 1 KiB per partition; half the rest, at "
                    "most what the DMA moves while TensorE starts on the first; the rest)",
                    {"1", "2", "3", "4"})
          .within(1, kMostXLoads),
      scheduleParam(
          "store_ramp", ParamType::Enum,
          "kernel = stride path: store groups after the first plane (grow: each as "
          "large as all before it, fewer DMAs while the stores bound; flat: one plane "
          "each, a short last store after the last matmul; bands: the first plane, "
          "then the other planes together in 3 bands of rows, x in 3 loads, when "
          "they fit 16 KiB per partition, else as auto; auto: bands where they pay "
          "(one batch, 4+ other planes, planes of at most 512 B per partition, DMA engines "
          "keeping up with HBM, matmuls at most 70% of the HBM time and of the busiest DMA "
          "engine's), else flat when the matmuls take over 70% of the HBM time, else grow)",
          {}, {"auto", "grow", "flat", "bands"}),
      scheduleParam(
          "out_layout", ParamType::Enum,
          "kernel = stride path: output partitions (phases: kd phases stacked on the PE "
          "columns, each store writes alternate output depths; slabs: partition co*k+h holds "
          "depths [h, h+1) x D_out/k of channel co, k the largest divisor of D with k x C_out "
          "<= 128, so x and the outputs move as single HBM ranges, one x load and one store per "
          "batch, when they fit a quarter of SBUF, else as phases; auto: slabs where the "
          "machine charges strided HBM rows and the estimate pays, else phases)",
          {}, {"auto", "phases", "slabs"}),
  };
}

PhaseOptions phaseOptions(const ParamValues& params) {
  PhaseOptions options;
  options.firstStorePositions = params.intOr("first_store_positions", 0);
  options.xLoads = params.intOr("x_loads", 0);
  options.storeRamp = params.getString("store_ramp");
  options.outLayout = params.getString("out_layout");
  return options;
}

PhasePlan planPhases(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                     const ConvOptions& options, const PhaseOptions& phase) {
  return PhasePlanner(core, dtype, geometry, options, phase).plan();
}

void buildConvTransposePhases(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype,
                              const HbmView& x, const HbmView& filters,
                              const std::optional<HbmView>& bias, const HbmView& out,
                              const ConvOptions& options, const PhaseOptions& phase) {
  PhaseEmitter(builder, core, options, dtype, x, filters, bias, out, phase).run();
}

}  // namespace neuronsim::kernels
