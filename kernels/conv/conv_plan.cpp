// The conv tiling: filter groups within a share of SBUF, then the largest output chunk whose input
// window, staging and output tiles fit twice (double buffering) and whose access patterns fit.
#include "kernels/conv/conv_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/builder/pe_estimate.h"
#include "kernels/builder/tile_allocator.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kMaxStep = 32767;      // int16 free-axis steps (A1)
constexpr int64_t kMaxNum = 65535;       // uint16 free-axis sizes (A1)
constexpr double kWeightShare = 0.4;     // of SBUF for resident filters
constexpr int64_t kReserveBytes = 1024;  // per partition, for bias and rounding
constexpr int64_t kWindowCap =
    48 * 1024;  // preferred window bytes per partition (keeps chunks pipelined)
constexpr int64_t kChunkWork = 27 * 512;  // PE columns of matmul work per chunk
constexpr int64_t kMinChunk = 256;
constexpr int64_t kPipelineChunks = 4;  // packed plans: chunks the output is at least cut into
constexpr int64_t kRollingPlanePositions = 2048;  // rolling planes: least output plane size
constexpr int64_t kSlotAlign = isa::kQuadrantPartitions;
// x rows shorter than this are staged: a padded window takes one DMA descriptor per row
constexpr int64_t kShortRowBytes = 512;
// Packed windows stage only rows shorter than two 64 B descriptors: each slot's staged copy is a
// 32-partition engine pass that costs as much as a 128-partition one.
constexpr int64_t kPackedShortRowBytes = 128;

using isa::ceilDiv;
int64_t product(const Int3& v) {
  return v[0] * v[1] * v[2];
}

/// SBUF bytes per partition left for chunk tiles, and the chunk search against them.
struct Budget {
  const ConvCore& core;
  const ConvPlan& plan;
  Int3 phase;
  int64_t elemBytes;
  int64_t available;        // bytes per partition for the double-buffered chunk tiles
  int64_t forcedPositions;  // chunk_positions (0: the caps below)
  int64_t columnCycles;     // PE cycles per moving column: 1, or the machine's fp32 factor

  Int3 windowOf(const Int3& c) const {
    return {windowExtent(core, 0, c[0]), windowExtent(core, 1, c[1]), windowExtent(core, 2, c[2])};
  }
  Int3 stageOf(const Int3& w) const {
    Int3 s;
    for (int a = 0; a < 3; ++a) s[a] = std::min(core.in[a], ceilDiv(w[a], core.inputDilation[a]));
    return s;
  }
  /// Preferred positions per chunk: about kChunkWork PE columns of matmul work (enough to hide
  /// a chunk's fixed DMA costs, small enough that the first load and the last store stay short).
  /// Per output: the filter columns meeting x (one phase's share), C_in and C_out tiles, times
  /// the PE cycles per column.
  int64_t chunkPositions() const {
    const int64_t work =
        plan.tapColumns * plan.ciTiles * ceilDiv(plan.coGroup, plan.parts) * columnCycles;
    return std::max(kMinChunk,
                    kChunkWork * product(phase) / plan.pairs / std::max<int64_t>(1, work));
  }

  bool fits(const Int3& c, bool preferred) const {
    const Int3 w = windowOf(c);
    const Int3 s = stageOf(w);
    if (!stepsFit(w, core.inputDilation[0], core.inputDilation[1]) ||
        !stepsFit(c, phase[0], phase[1]) || (plan.staged && !stepsFit(s)))
      return false;
    const int64_t windowBytes = plan.ciTiles * product(w) * elemBytes;
    const int64_t stageBytes = plan.staged ? plan.ciTiles * product(s) * elemBytes : 0;
    const int64_t outBytes = product(c) * elemBytes;
    if (2 * (windowBytes + stageBytes + outBytes) > available) return false;
    if (!preferred) return true;
    if (forcedPositions > 0) return product(c) <= forcedPositions;
    // Packed windows read their halo from HBM once per slot: they take the largest chunk up to
    // a kPipelineChunks-th of the output (no window cap), so the halo is re-read less while
    // enough chunks remain to hide the first load and the last store.
    if (plan.pack > 1)
      return product(c) <=
             std::max(chunkPositions(), ceilDiv(core.batch * product(core.out), kPipelineChunks));
    return windowBytes <= kWindowCap && product(c) <= chunkPositions();
  }
  std::optional<Int3> search(bool preferred) const {
    return largestChunk(core.out, [&](const Int3& c) { return fits(c, preferred); });
  }
};

/// The im2col fallback: per tap and C_in tile a compact column of the chunk's inputs.
ConvPlan planPerTap(const ConvCore& core, ConvPlan plan, int64_t elemBytes, int64_t available,
                    const isa::Geometry& geometry) {
  const int64_t columns = plan.ciTiles * core.tapCount();
  auto fits = [&](const Int3& c) {
    return stepsFit(c) && 2 * (columns + 1) * c[0] * c[1] * c[2] * elemBytes <= available;
  };
  const std::optional<Int3> chunk = largestChunk(core.out, fits);
  if (!chunk)
    throw Error(
        fmt::format("{}: the inputs of one output position ({} C_in tiles x {} taps) do "
                    "not fit SBUF next to the filters",
                    core.kernel, plan.ciTiles, core.tapCount()));
  plan.perTap = true;
  plan.staged = false;
  plan.chunk = *chunk;
  plan.window = *chunk;
  ConvCore unit = core;
  unit.stride = {1, 1, 1};
  plan.block = blockFor(unit, plan.chunk, plan.window, geometry.matmulFreeFp32());
  return plan;
}

/// Packed windows of large planes (stride 1 in D, no staging): single-plane chunks over a ring
/// of (kRingLookahead + 1) x span input planes, so each plane is read from HBM once per slot
/// (chunks of several planes re-read span - 1 planes each) and loads come one plane at a time.
void planRollingPlanes(const ConvCore& core, ConvPlan& plan, const Budget& budget,
                       const isa::Geometry& geometry) {
  if (plan.pack == 1 || plan.staged || plan.dilated || core.stride[0] != 1 ||
      core.out[1] * core.out[2] < kRollingPlanePositions)
    return;
  const Int3 chunk{1, core.out[1], core.out[2]};
  Int3 window = budget.windowOf(chunk);
  window[0] *= kRingLookahead + 1;
  const int64_t ringBytes = product(window) * budget.elemBytes;
  const int64_t outBytes = product(chunk) * budget.elemBytes;
  if (!stepsFit(window) || !stepsFit(chunk, plan.phase[0], plan.phase[1]) ||
      ringBytes + 2 * outBytes > budget.available)
    return;
  plan.rollingPlanes = true;
  plan.chunk = chunk;
  plan.window = window;
  plan.block = blockFor(core, chunk, window, geometry.matmulFreeFp32(), plan.phase);
}

/// PE cycles of one (kh, kw group) row of matmuls over two output planes: Kd + 1 matmuls of
/// `half` + F stationary columns with plane pairs, else 2 x Kd of F, each max(matmul, the next
/// stationary's load) (P1, I2).
double planePairCycles(const ConvCore& core, const ConvPlan& plan, const isa::Geometry& geometry,
                       bool fp32, bool paired) {
  const int64_t columns = plan.pairs > 1 ? plan.pairStride + core.cout : core.cout;
  const int64_t stationary = paired ? geometry.partitionHalf() + columns : columns;
  const int64_t matmuls = paired ? core.taps[0] + 1 : 2 * core.taps[0];
  const int64_t moving = product(plan.block);
  return static_cast<double>(matmuls) * std::max(matmulCycles(geometry, stationary, moving, fp32),
                                                 stationaryLoadCycles(geometry, stationary, fp32));
}

/// Plane pairs (ConvPlan::planePairs) for a rolling plan with filters as the stationary: chunks
/// of two planes over a ring of their window plus kRingLookahead x 2 planes, where the ring, the
/// out tiles (one plane on all partitions) and the paired filters fit the budget; auto only
/// where planePairCycles says it takes fewer PE cycles.
void planPlanePairs(const ConvCore& core, ConvPlan& plan, const Budget& budget,
                    const isa::Geometry& geometry, const std::string& option) {
  const int64_t columns = plan.pairs > 1 ? plan.pairStride + core.cout : core.cout;
  if (option == "off" || !plan.rollingPlanes || plan.positionsStationary || core.hasBias ||
      core.act != isa::ActFn::Copy || core.out[0] < 2 || core.dilation[0] != 1 ||
      plan.coGroup != core.cout || columns > geometry.partitionHalf() || plan.block[0] != 1)
    return;
  const bool fp32 = budget.elemBytes == 4;
  if (option == "auto" && planePairCycles(core, plan, geometry, fp32, true) >=
                              planePairCycles(core, plan, geometry, fp32, false))
    return;
  const Int3 chunk{2, core.out[1], core.out[2]};
  Int3 window = budget.windowOf(chunk);
  window[0] += kRingLookahead * chunk[0];
  const int64_t pairedFilters =
      (core.taps[0] + 1) * plan.tapColumns / core.taps[0] * plan.parts * budget.elemBytes;
  const int64_t outBytes = chunk[1] * chunk[2] * budget.elemBytes;
  if (!stepsFit(window) ||
      product(window) * budget.elemBytes + 2 * outBytes + pairedFilters > budget.available)
    return;
  plan.planePairs = true;
  plan.chunk = chunk;
  plan.window = window;
}

}  // namespace

bool stepsFit(const Int3& e, int64_t scaleD, int64_t scaleH) {
  for (int64_t v : e)
    if (v > kMaxNum) return false;
  if (e[0] > 1 && scaleD * e[1] * e[2] > kMaxStep) return false;
  if (e[1] > 1 && scaleH * e[2] > kMaxStep) return false;
  return true;
}

std::optional<Int3> largestChunk(const Int3& out, const std::function<bool(const Int3&)>& fits) {
  Int3 c = out;
  for (int axis = 0; axis < 3; ++axis) {
    if (fits(c)) return c;
    c[axis] = 1;
    if (!fits(c)) continue;
    int64_t lo = 1, hi = out[axis];
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      c[axis] = mid;
      if (fits(c)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    c[axis] = lo;
    return c;
  }
  return fits(c) ? std::optional<Int3>(c) : std::nullopt;
}

Int3 blockFor(const ConvCore& core, const Int3& chunk, const Int3& window, int64_t maxFree,
              const Int3& phase) {
  Int3 c, step;
  for (int a = 0; a < 3; ++a) {
    c[a] = ceilDiv(chunk[a], phase[a]);
    step[a] = core.stride[a] * phase[a];
  }
  const Int3& w = window;
  Int3 b;
  b[2] = std::min(c[2], maxFree);
  if (b[2] > 1 && step[2] > kMaxStep) b[2] = 1;
  b[1] = std::min(c[1], maxFree / b[2]);
  if (b[1] > 1 && step[1] * w[2] > kMaxStep) b[1] = 1;
  b[0] = std::min(c[0], maxFree / (b[2] * b[1]));
  if (b[0] > 1 && step[0] * w[1] * w[2] > kMaxStep) b[0] = 1;
  return b;
}

int64_t tileParts(const isa::Geometry& geometry) {
  return geometry.peTile();
}

Int3 outputPhase(const ConvCore& core) {
  Int3 p;
  for (int a = 0; a < 3; ++a)
    p[a] = core.inputDilation[a] / std::gcd(core.stride[a], core.inputDilation[a]);
  return p;
}

int64_t windowExtent(const ConvCore& core, int axis, int64_t outputs) {
  return (outputs - 1) * core.stride[axis] + (core.taps[axis] - 1) * core.dilation[axis] + 1;
}

namespace {

/// Positions as the stationary takes fewer PE cycles than filters as the stationary, per PE tile
/// of output pairs and tap group: a matmul of `pairColumns` moving columns, each behind a
/// LoadStationary of the tile's pairs (P1), against one matmul of the pairs moving (its filter
/// stationary loads once per block; two with `wide` pairs, which filters as the stationary leave
/// unpaired). On Trn2 an fp32 stationary loads at a quarter of the bf16 rate (ls_speedup_fp32 1):
/// 512 cycles against 512, and the pair transposes come on top.
bool positionsPay(const isa::Geometry& geometry, int64_t tile, int64_t pairColumns, bool fp32,
                  bool wide) {
  const double load = stationaryLoadCycles(geometry, tile, fp32);
  const double multiply = matmulCycles(geometry, tile, pairColumns, fp32);
  const double filters = matmulCycles(geometry, tile, tile, fp32) * (wide ? 2 : 1);
  return std::max(multiply, load) < filters;
}

/// PE cycles of one output plane's matmuls (rolling planes: a chunk is one plane), from the
/// machine's rates: with positions as the stationary one matmul per sub-block of up to a PE tile
/// of output pairs and tap column, else the plane's pairs as moving columns per tap column and
/// channel tile.
double planeMatmulCycles(const ConvCore& core, const ConvPlan& plan, const isa::Geometry& geometry,
                         bool fp32) {
  const int64_t pairs = core.out[1] * ceilDiv(core.out[2], plan.pairs);
  if (plan.positionsStationary)
    return static_cast<double>(ceilDiv(pairs, plan.parts) * plan.tapColumns) *
           matmulCycles(geometry, plan.parts, plan.pairColumns, fp32);
  const int64_t stationary = std::min(core.cout, plan.parts) * plan.pairs;
  // plane pairs: Kd + 1 matmuls per (kh, kw group) serve two planes
  const double share = plan.planePairs ? (core.taps[0] + 1) / (2.0 * core.taps[0]) : 1.0;
  return share *
         static_cast<double>(plan.tapColumns * plan.ciTiles * ceilDiv(core.cout, plan.parts)) *
         matmulCycles(geometry, stationary, pairs, fp32);
}

/// Slot pairs within a partition half (A1: VectorE moves rows within a half) split a rolling
/// plane's load; auto with full-rate matmuls, or where the plane's slot loads at the HBM share
/// (rows read at a stride: `dmaStridedHbmEfficiency`) outlast its matmuls: behind fp32's (4x the
/// PE cycles) the loads hide on trn2 and the copies cost VectorE and the evictions' engine
/// (conv3d_bwd C 32 fp32 1110 -> 1121 us), but not on trn1 (plane pairs: dx alone 429.8 us
/// DMA-bound, 315.4 with the copies).
void planSlotCopies(const ConvCore& core, ConvPlan& plan, const isa::Geometry& geometry,
                    int64_t elemBytes, const std::string& option) {
  if (!plan.rollingPlanes || option == "off" ||
      geometry.partitionHalf() % (2 * plan.slotParts) != 0 ||
      plan.window[2] <= 2 * core.dilation[2] + 1)
    return;
  const double bytes =
      static_cast<double>(plan.pack * core.cin * core.in[1] * core.in[2] * elemBytes);
  const double hbm = geometry.hbmBytesPerPeCycle * geometry.dmaStridedHbmEfficiency;
  const bool loadBound =
      hbm > 0 && bytes / hbm > planeMatmulCycles(core, plan, geometry, elemBytes == 4);
  plan.slotCopies = option == "on" || elemBytes < 4 || loadBound;
}

/// Slot copies on VectorE alone while its copies of a plane (each slot pair's window columns
/// but the shift, at the 4x copy rate of its performance mode for 16-bit data, A2) take no
/// longer than the plane's matmuls; else VectorE and ScalarE in turn (trn1, no performance
/// mode: 7.7 us of copies a plane against 3.3 us of matmuls on conv3d_bwd C 32's dx).
std::vector<isa::Engine> slotCopyEngines(const ConvCore& core, const ConvPlan& plan,
                                         const isa::Geometry& geometry, int64_t elemBytes,
                                         const std::string& option) {
  const std::vector<isa::Engine> vector{isa::Engine::Vector};
  const std::vector<isa::Engine> spread{isa::Engine::Vector, isa::Engine::Scalar};
  if (!plan.slotCopies || option == "vector") return vector;
  if (option == "spread") return spread;
  const double elements = static_cast<double>(plan.pack / 2 * plan.window[1]) *
                          static_cast<double>(plan.window[2] - core.dilation[2]);
  const double rate = geometry.vectorPerfMode && elemBytes == 2 ? 4 : 1;
  const double copyNs = elements / rate / geometry.vectorGhz;
  const double matmulNs = planeMatmulCycles(core, plan, geometry, elemBytes == 4) / geometry.peGhz;
  return copyNs > matmulNs ? spread : vector;
}

ConvPlan planWith(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                  const ConvOptions& options, bool allowPack, bool allowWidePairs = true) {
  ConvPlan plan;
  const int64_t elemBytes = isa::dtypeBytes(dtype);
  const int64_t capacity = geometry.sbufPartitionBytes;
  plan.parts = tileParts(geometry);
  const int64_t parts = plan.parts;
  plan.ciTiles = ceilDiv(core.cin, parts);
  plan.ciParts = std::min(core.cin, parts);
  plan.dilated =
      core.inputDilation[0] > 1 || core.inputDilation[1] > 1 || core.inputDilation[2] > 1;

  // Slots of kSlotAlign partitions or more start where the ISA lets a partition range start.
  const int64_t maxPack =
      std::min<int64_t>(parts / kSlotAlign, std::bit_ceil(static_cast<uint64_t>(core.taps[2])));
  if (allowPack && plan.ciTiles == 1 && !plan.dilated)
    while (plan.pack * 2 <= maxPack && core.cin <= parts / (plan.pack * 2)) plan.pack *= 2;
  const int64_t shortRow = plan.pack > 1 ? kPackedShortRowBytes : kShortRowBytes;
  plan.staged = plan.dilated || core.in[2] * elemBytes < shortRow;
  plan.tapColumns = core.tapCount();
  if (plan.pack > 1) {
    plan.slotParts = parts / plan.pack;
    plan.ciParts = parts;
    plan.tapColumns = core.taps[0] * core.taps[1] * ceilDiv(core.taps[2], plan.pack);
  }
  const int64_t perColumn = plan.ciTiles * plan.tapColumns * elemBytes;
  const int64_t weightBudget = static_cast<int64_t>(kWeightShare * static_cast<double>(capacity));
  // Two W offsets per matmul need a free slot past the last kw tap; the odd offset's block
  // starts at partition 32 and is evicted to partitions 0.. (A1: Vector and Scalar move data
  // across partitions only within a half, so C_out <= 32). A matmul costs max(min(64, M), N) PE
  // cycles (I2): the second offset's columns come free while N halves. With positions as the
  // stationary in quadrant groups each offset has its own PE transpose, so no result crosses
  // partitions: C_out 33..64 pairs too, offsets C_out columns apart (N = 2 x C_out), one block
  // per half.
  const bool plainEviction = !core.hasBias && core.act == isa::ActFn::Copy;
  const bool wide =
      allowWidePairs && !core.hasBias && core.cout > kSlotAlign && core.cout <= 2 * kSlotAlign;
  const bool positions =
      options.stationary == "positions" ||
      (options.stationary == "auto" && plainEviction &&
       positionsPay(geometry, parts, wide ? 2 * core.cout : kSlotAlign + core.cout, elemBytes == 4,
                    wide));
  const bool widePairs = wide && positions;
  const int64_t pairStride = widePairs ? core.cout : kSlotAlign;
  if (options.wPairs != "off" && plan.pack > core.taps[2] && core.stride[2] == 1 &&
      core.dilation[2] == 1 && core.out[2] >= 2 && core.cout <= pairStride &&
      pairStride + core.cout <= parts && (pairStride + core.cout) * perColumn <= weightBudget) {
    plan.pairs = 2;
    plan.pairStride = pairStride;
  }
  if (options.stationary == "positions" && plan.pairs == 1)
    throw Error(fmt::format(
        "{}: stationary positions needs paired W outputs (C_in <= 32 with 4 kw slots for at "
        "most 3 kw taps, C_out <= 32 (<= 64 without bias, in blocks of whole output rows), W "
        "stride and dilation 1)",
        core.kernel));
  plan.positionsStationary = plan.pairs > 1 && positions;
  plan.coGroup = std::min(core.cout, weightBudget / perColumn);
  if (plan.coGroup >= parts) plan.coGroup -= plan.coGroup % parts;
  if (plan.coGroup < 1)
    throw Error(
        fmt::format("{}: filters need {} bytes per partition for one output channel "
                    "(C_in tiles x taps), more than the {}-byte SBUF share for filters",
                    core.kernel, perColumn, weightBudget));

  plan.phase = outputPhase(core);
  if (plan.pairs > 1) plan.phase[2] = 2;
  // positions as the stationary: the ring of evicted sub-block results (at most 2 PE tiles wide)
  const int64_t pairBytes =
      plan.positionsStationary ? kPairRing * 2 * parts * (plainEviction ? elemBytes : 4) : 0;
  Budget budget{core,
                plan,
                plan.phase,
                elemBytes,
                capacity - plan.coGroup * perColumn - pairBytes - kReserveBytes,
                options.chunkPositions,
                elemBytes == 4 ? static_cast<int64_t>(std::llround(geometry.fp32MatmulFactor)) : 1};
  std::optional<Int3> chunk = budget.search(true);
  if (!chunk) chunk = budget.search(false);
  if (!chunk && plan.pack > 1) return planWith(core, dtype, geometry, options, false, false);
  if (!chunk && !plan.dilated) return planPerTap(core, plan, elemBytes, budget.available, geometry);
  if (!chunk) {
    const Int3 w = budget.windowOf({1, 1, 1});
    throw Error(
        fmt::format("{}: the input window of one output position ({} C_in tiles x "
                    "{}x{}x{} taps extent) does not fit SBUF next to the filters",
                    core.kernel, plan.ciTiles, w[0], w[1], w[2]));
  }
  plan.chunk = *chunk;
  plan.window = budget.windowOf(plan.chunk);
  plan.stage = budget.stageOf(plan.window);
  plan.block = blockFor(core, plan.chunk, plan.window, geometry.matmulFreeFp32(), plan.phase);
  if (options.chunkPositions == 0) planRollingPlanes(core, plan, budget, geometry);
  planPlanePairs(core, plan, budget, geometry, options.planePairs);
  planSlotCopies(core, plan, geometry, elemBytes, options.slotCopies);
  plan.quadrantGroups = plan.positionsStationary && !core.hasBias && plan.block[0] == 1 &&
                        plan.phase[0] == 1 && plan.phase[1] == 1 &&
                        plan.block[2] == ceilDiv(plan.chunk[2], plan.phase[2]);
  if (widePairs && plan.pairs > 1 && !plan.quadrantGroups)
    return planWith(core, dtype, geometry, options, allowPack, false);
  if (plan.positionsStationary)
    plan.pairColumns = plan.quadrantGroups ? 2 * plan.pairStride : plan.pairStride + plan.coGroup;
  if (plan.quadrantGroups)
    plan.groupParts = plan.pairStride > kSlotAlign ? 2 * kSlotAlign : kSlotAlign;
  return plan;
}

/// The core's PSUM tiles fit, allocated as the emitter does: the accumulation ring, then (with
/// positions as the stationary) the ring of sub-block results.
bool psumFits(const ConvPlan& plan, const isa::Geometry& geometry) {
  TileAllocator psum(geometry.psumPartitionBytes, geometry.psumBankBytes(), kPsumAlignment);
  bool fits = true;
  for (int64_t i = 0; i < plan.psumBuffers; ++i)
    fits = fits && psum.allocate(product(plan.block) * isa::dtypeBytes(isa::Dtype::Fp32)) >= 0;
  for (int i = 0; i < kPairRing && plan.positionsStationary; ++i)
    fits = fits && psum.allocate(plan.pairColumns * isa::dtypeBytes(isa::Dtype::Fp32)) >= 0;
  return fits;
}

}  // namespace

ConvPlan planConv(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                  const ConvOptions& options) {
  ConvPlan plan = planWith(core, dtype, geometry, options, options.tapPack != "off");
  // Positions as the stationary keeps SBUF for its sub-block results: where that leaves no room
  // for rolling planes and filters as the stationary rolls, the ring wins (each plane read once
  // per slot, not once per chunk: trn1 fp32 conv3d_bwd C 32's dx 996 -> 524 us).
  if (options.stationary == "auto" && plan.positionsStationary && !plan.rollingPlanes &&
      options.chunkPositions == 0) {
    ConvOptions filters = options;
    filters.stationary = "filters";
    ConvPlan rolling = planWith(core, dtype, geometry, filters, options.tapPack != "off");
    if (rolling.rollingPlanes) plan = rolling;
  }
  if (options.psumBuffers > 0) plan.psumBuffers = options.psumBuffers;
  if (!psumFits(plan, geometry)) {
    ConvPlan fewer = plan;
    while (fewer.psumBuffers > 1 && !psumFits(fewer, geometry)) --fewer.psumBuffers;
    throw Error(fmt::format(
        "{}: {}psum_buffers {} leaves no PSUM room for the {} sub-block results of positions as "
        "the stationary (at most {} here)",
        core.kernel, options.paramPrefix, plan.psumBuffers, kPairRing, fewer.psumBuffers));
  }
  plan.copyEngines =
      slotCopyEngines(core, plan, geometry, isa::dtypeBytes(dtype), options.slotCopyEngines);
  if (options.evict == "vector") plan.evictEngines = {isa::Engine::Vector};
  // slot copies keep VectorE busy (in order: an eviction behind a copy waits for its DMA)
  if (options.evict == "scalar" || (plan.slotCopies && options.evict == "auto"))
    plan.evictEngines = {isa::Engine::Scalar};
  return plan;
}

namespace {

/// One conv core schedule knob: its parameter and the ConvOptions member it sets.
struct ConvKnob {
  ParamSpec spec;
  int64_t ConvOptions::*number = nullptr;      // Int knobs (auto: 0)
  std::string ConvOptions::*choice = nullptr;  // Enum knobs
};

/// An int knob taking 1 and up, or with `psumBanks` 1 up to the machine's PSUM banks.
ConvKnob countKnob(std::string name, std::string meaning, std::vector<std::string> candidates,
                   int64_t ConvOptions::*number, bool psumBanks) {
  const ParamSpec spec =
      scheduleParam(std::move(name), ParamType::Int, std::move(meaning), std::move(candidates));
  return {psumBanks ? spec.withinPsumBanks() : spec.within(1), number};
}

ConvKnob choiceKnob(std::string name, std::string meaning, std::vector<std::string> choices,
                    std::string ConvOptions::*choice) {
  return {
      scheduleParam(std::move(name), ParamType::Enum, std::move(meaning), {}, std::move(choices)),
      nullptr, choice};
}

const std::vector<ConvKnob>& convKnobs() {
  static const std::vector<ConvKnob> knobs = {
      countKnob("chunk_positions",
                "output positions per input window, at least 1 (auto: about 27 x 512 PE columns "
                "of work, windows up to 48 KiB per partition; packed windows up to a quarter of "
                "the output, or single planes over a ring of input planes; a forced value drops "
                "both)",
                {"1024", "4096", "16384"}, &ConvOptions::chunkPositions, false),
      countKnob("psum_buffers",
                "PSUM accumulation blocks in flight, 1..PSUM banks (auto: 4; with positions as "
                "the stationary the sub-block results need PSUM too)",
                {"2", "4", "6"}, &ConvOptions::psumBuffers, true),
      choiceKnob("tap_pack",
                 "kw taps sharing one matmul on partition slots when C_in is small (auto: when "
                 "C_in fits half the partitions; off: one tap per matmul)",
                 {"auto", "off"}, &ConvOptions::tapPack),
      choiceKnob("evict_engine",
                 "engine evicting PSUM (auto: Vector and Scalar in turn, Scalar alone when "
                 "VectorE makes slot copies or, on the kernel = stride path, where their PSUM "
                 "reads serialize; vector: Vector where the activation allows, else Scalar)",
                 {"auto", "vector", "scalar"}, &ConvOptions::evict),
      choiceKnob("w_pairs",
                 "two W-neighbour outputs per packed matmul (auto: when a slot is free past the "
                 "last kw tap, stride and dilation W are 1 and C_out <= 32, or C_out <= 64 with "
                 "positions as the stationary and blocks of one plane; off: one output per "
                 "column)",
                 {"auto", "off"}, &ConvOptions::wPairs),
      choiceKnob("stationary",
                 "the operand TensorE holds with paired W outputs (filters; positions: 128 output "
                 "pairs of the window against the packed filters, then one PE transpose per 128 "
                 "pairs; auto: positions without bias and activation when its matmuls with "
                 "their stationary loads take fewer PE cycles: not fp32 on trn2)",
                 {"auto", "filters", "positions"}, &ConvOptions::stationary),
      choiceKnob("slot_copies",
                 "rolling planes with 4 kw slots: the two slots of a partition half each load "
                 "half of a plane's columns and VectorE copies them across (on), or every slot "
                 "loads the whole plane (off); auto: on unless matmuls are fp32",
                 {"auto", "on", "off"}, &ConvOptions::slotCopies),
      choiceKnob("slot_copy_engines",
                 "the engines making the slot copies (vector: VectorE; spread: VectorE and "
                 "ScalarE in turn; auto: spread where VectorE's copies of a plane would take "
                 "longer than the plane's matmuls, e.g. without VectorE's bf16 performance "
                 "mode on trn1)",
                 {"auto", "vector", "spread"}, &ConvOptions::slotCopyEngines),
      choiceKnob("plane_pairs",
                 "rolling planes with filters as the stationary: one matmul per window plane "
                 "serves two output planes (tap kd's filters in the lower PE columns, kd - 1's in "
                 "the upper half), Kd + 1 matmuls per plane pair instead of 2 x Kd (auto: where "
                 "the PE cycle estimate says it pays, e.g. fp32 C_out <= 32 on trn2; on: wherever "
                 "it applies)",
                 {"auto", "on", "off"}, &ConvOptions::planePairs),
  };
  return knobs;
}

bool named(const std::vector<std::string>& knobs, const std::string& name) {
  return knobs.empty() || std::find(knobs.begin(), knobs.end(), name) != knobs.end();
}

}  // namespace

ConvOptions convOptions(const ParamValues& params, const std::string& prefix,
                        const std::vector<std::string>& knobs) {
  ConvOptions options;
  options.paramPrefix = prefix;
  for (const ConvKnob& knob : convKnobs()) {
    if (!named(knobs, knob.spec.name)) continue;
    const std::string name = fmt::format("{}{}", prefix, knob.spec.name);
    if (knob.choice) options.*knob.choice = params.getString(name);
    if (!knob.number) continue;
    options.*knob.number = params.intOr(name, 0);
  }
  return options;
}

std::vector<ParamSpec> convScheduleParams(const std::string& prefix,
                                          const std::vector<std::string>& knobs) {
  const std::string subject =
      prefix.empty() ? "" : fmt::format("{} ", prefix.substr(0, prefix.size() - 1));
  std::vector<ParamSpec> specs;
  for (const ConvKnob& knob : convKnobs()) {
    if (!named(knobs, knob.spec.name)) continue;
    ParamSpec spec = knob.spec;
    spec.name = fmt::format("{}{}", prefix, spec.name);
    spec.meaning = fmt::format("{}{}", subject, spec.meaning);
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace neuronsim::kernels
