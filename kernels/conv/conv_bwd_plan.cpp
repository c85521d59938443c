// conv3d_bwd planning: which dw method, and for the Rows method its chunk, partition box, PSUM
// banking and passes, within the SBUF and PSUM budgets.
#include "kernels/conv/conv_bwd_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/builder/pe_estimate.h"
#include "kernels/conv/conv_plan.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kReserveBytes = 1024;    // per partition, for rounding
constexpr int64_t kWindowCap = 64 * 1024;  // preferred window bytes per partition
// depth-packed: smaller chunks expose less of the first load (C 32, 16x64x64 dw + db with row
// bands, session 6: 153.4 us at 16 KiB = 3 x rows per band, 175.2 at 48 KiB); with x and dy in
// depth groups (4x the DMAs, Sync-bound loads) and the tail overlap hiding the first load, larger
// chunks pay (session 7, all gradients: 16 KiB 197.8 us, 20 190.5, 24 188.5, 28 and 32 187.9,
// 36 203.4, 48 206.7; dw alone 134.1 -> 125.3 us at 28)
constexpr int64_t kPackedWindowCap = 28 * 1024;
constexpr int64_t kMinDescriptorBytes = 64;
constexpr int64_t kQuadrant = isa::kQuadrantPartitions;
constexpr int64_t kBoxesWindowCap = 48 * 1024;  // Boxes: preferred window bytes per partition
constexpr int64_t kBoxesChunkCap = 1024;  // Boxes: preferred dy positions per chunk  // x rows
                                          // shorter than one DMA descriptor are staged

using isa::ceilDiv;
int64_t product(const Int3& v) {
  return v[0] * v[1] * v[2];
}

/// Units grouped by (kh, kw) shift, then C_in tile, then kd; cut into passes of `perPass`
/// accumulators, a shift's units kept together when they fit one pass.
std::vector<std::vector<DwUnit>> dwPasses(const ConvCore& core, int64_t ciTiles, int64_t perPass) {
  const Int3& k = core.taps;
  std::vector<std::vector<DwUnit>> passes(1);
  const int64_t perShift = ciTiles * k[0];
  for (int64_t kh = 0; kh < k[1]; ++kh)
    for (int64_t kw = 0; kw < k[2]; ++kw) {
      const int64_t used = static_cast<int64_t>(passes.back().size());
      if (used > 0 && perShift <= perPass && used + perShift > perPass) passes.emplace_back();
      for (int64_t t = 0; t < ciTiles; ++t)
        for (int64_t kd = 0; kd < k[0]; ++kd) {
          if (static_cast<int64_t>(passes.back().size()) == perPass) passes.emplace_back();
          passes.back().push_back({(kd * k[1] + kh) * k[2] + kw, t});
        }
    }
  return passes;
}

/// A DMA transpose of a dy box moves at least this many bytes: below it the DMA triggers cost
/// more than the PE transposes they replace.
constexpr int64_t kMinDyDmaBytes = 64 * 1024;

/// dy boxes come transposed straight from HBM when one box-depth DMA is large enough.
bool dyDmaPays(const ConvCore& core, int64_t coWidth, int64_t elemBytes, int64_t parts) {
  const int64_t positions = std::min(parts, core.out[1] * core.out[2]);
  return positions * coWidth * elemBytes >= kMinDyDmaBytes;
}

/// dy stationary saves at least this many TensorE cycles (10 us at 2.4 GHz): it adds a tail of
/// accumulator evictions and transposes before the store (x_in [1,8,8,16,16] with C_out 64
/// saves about 18k cycles on paper and runs 6 us slower).
constexpr int64_t kMinDyStationarySaving = 24000;

/// Whether dyT [positions, co] should be the stationary. A matmul takes max(min(64, M), N)
/// cycles for M stationary and N moving columns (I2); per input depth of a box, x stationary
/// multiplies each (tap, C_in tile) unit with a coWidth-wide moving and dy stationary each
/// (kh, kw) shift's kd taps at once (moving kd x ci columns). Needs C_out within the PE columns.
bool dyStationaryPays(const ConvCore& core, int64_t ciParts, int64_t coWidth, int64_t parts) {
  constexpr int64_t kMinCycles = 64;
  const int64_t shifts = core.taps[1] * core.taps[2];
  const int64_t xStationary = core.tapCount() * std::max(std::min(kMinCycles, ciParts), coWidth);
  const int64_t dyStationary =
      shifts * std::max(std::min(kMinCycles, coWidth), core.taps[0] * ciParts);
  const int64_t depthsOfBoxes = core.batch * core.out[0] *
                                ceilDiv(core.out[1] * core.out[2], parts) *
                                ceilDiv(core.cin, parts);
  return coWidth <= parts && (xStationary - dyStationary) * depthsOfBoxes >= kMinDyStationarySaving;
}

/// Whether a packed xT stationary of `stationary` columns loads longer than its matmul of
/// `moving` columns, the one the next load hides behind (P1, I2): then consecutive matmuls
/// should share it (DwRowsPlan::rowReuse). C 32 packed: 128 x 4 = 512 cycles against 256 in fp32
/// on Trn2 (ls_speedup_fp32 1), 128 against 256 on Trn1, 32 against 64 in bf16.
bool rowLoadExposed(const isa::Geometry& geometry, isa::Dtype dtype, int64_t stationary,
                    int64_t moving) {
  const bool fp32 = dtype == isa::Dtype::Fp32;
  return stationaryLoadCycles(geometry, stationary, fp32) >
         matmulCycles(geometry, stationary, moving, fp32);
}

/// The largest dy depth group of a packed matmul (1: packing does not apply): stride and dilation
/// 1 along D, one C_in tile, group + Kd - 1 depth slots of ci within the PE columns, group x
/// coWidth fp32 within a PSUM bank, and no more depths than dy has.
int64_t maxDepthGroup(const ConvCore& core, int64_t ciTiles, int64_t ciParts, int64_t coWidth,
                      const isa::Geometry& geometry) {
  if (core.stride[0] != 1 || core.dilation[0] != 1 || ciTiles != 1) return 1;
  const int64_t bySlots = geometry.maxStationaryFree() / ciParts - (core.taps[0] - 1);
  const int64_t byBank = geometry.psumBankBytes() / 4 / coWidth;
  return std::max<int64_t>(1, std::min({bySlots, byBank, core.out[0]}));
}

/// PE cycles per (kh, kw) shift and dy depth of a box with x stationary, packed `group` dy depths
/// to a matmul (group 1: one matmul per kd tap). A matmul takes max(min(64, M), N) cycles (I2).
int64_t xStationaryCycles(const ConvCore& core, int64_t ciParts, int64_t coWidth, int64_t group) {
  constexpr int64_t kMinCycles = 64;
  const int64_t slots = group + core.taps[0] - 1;
  const int64_t matmul = std::max(std::min(kMinCycles, slots * ciParts), group * coWidth);
  return group == 1 ? core.taps[0] * matmul : ceilDiv(matmul, group);
}

/// The dy depth group of the plan: 1 with dy stationary (whatever is forced), forced (>= 2, an
/// error when these shapes cannot pack it), off (1), or
/// auto: the cheapest group when it saves at least kMinDyStationarySaving cycles over one matmul
/// per tap and, with dw_stationary auto, beats dy stationary where that applies.
int64_t chooseDepthGroup(const ConvCore& core, const DwRowsPlan& p, const isa::Geometry& geometry,
                         const ConvBwdOptions& options) {
  const int64_t most = maxDepthGroup(core, p.ciTiles, p.ciParts, p.coWidth, geometry);
  const int64_t forced = options.dwDepthGroup;
  if (p.dyStationary) return 1;  // packs no depths: a forced group changes nothing (run warns)
  if (forced >= 2) {
    if (forced > most)
      throw Error(fmt::format(
          "{}: dw_depth_group {} does not apply here (at most {}: packing needs x stationary, D "
          "stride and dilation 1, (group + Kd - 1) x C_in <= {} and group x C_out <= {})",
          core.kernel, forced, most, geometry.maxStationaryFree(), geometry.psumBankBytes() / 4));
    return forced;
  }
  if (forced == 1) return 1;
  int64_t best = 1;
  for (int64_t g = 2; g <= most; ++g)
    if (xStationaryCycles(core, p.ciParts, p.coWidth, g) <
        xStationaryCycles(core, p.ciParts, p.coWidth, best))
      best = g;
  const int64_t depthsOfBoxes =
      core.batch * core.out[0] * ceilDiv(core.out[1] * core.out[2], p.parts);
  const int64_t shifts = core.taps[1] * core.taps[2];
  const int64_t saving = (xStationaryCycles(core, p.ciParts, p.coWidth, 1) -
                          xStationaryCycles(core, p.ciParts, p.coWidth, best)) *
                         shifts * depthsOfBoxes;
  if (best == 1 || saving < kMinDyStationarySaving) return 1;
  const int64_t dyCycles = std::max(std::min<int64_t>(64, p.coWidth), core.taps[0] * p.ciParts);
  if (options.dwStationary == "auto" && p.coWidth <= p.parts &&
      dyCycles <= xStationaryCycles(core, p.ciParts, p.coWidth, best))
    return 1;
  return best;
}

/// Depth pairs save at least this many matmul cycles on paper: the plan also packs the
/// transposes, but adds the selection tail (bf16, pad 1, C_in = C_out, session 12, trn2 / trn1:
/// C 40 4x8x8 2304 cycles 23.4 -> 25.3 / 23.3 -> 27.0 us, C 64 4x16x16 4608: 32.9 -> 32.3 /
/// 36.0 -> 39.3 us, C 40 8x16x16 5760: 53.1 -> 41.9 / 52.2 -> 49.8 us).
constexpr int64_t kMinDepthPairsSaving = 5000;

/// Whether depth pairs (DwRowsPlan::depthPairs) apply: x stationary, Kd 3, D stride and dilation
/// 1, one C_in tile of more than a quarter and at most half the PE columns, 3 column groups
/// within a PSUM bank, 2 dy depths; auto: when they save at least kMinDepthPairsSaving PE
/// cycles (I2, as xStationaryCycles) over one matmul per tap and (where it applies) dy
/// stationary; on: wherever they apply.
bool depthPairsPay(const ConvCore& core, const DwRowsPlan& p, const isa::Geometry& geometry,
                   const ConvBwdOptions& options) {
  constexpr int64_t kMinCycles = 64;
  if (options.dwDepthPairs == "off" || p.dyStationary || options.dwDepthGroup != 0) return false;
  const int64_t columns = geometry.maxStationaryFree();
  if (core.taps[0] != 3 || core.stride[0] != 1 || core.dilation[0] != 1 || p.ciTiles != 1 ||
      4 * p.ciParts <= columns || 2 * p.ciParts > columns ||
      3 * p.coWidth > geometry.psumBankBytes() / 4 || core.out[0] < 2)
    return false;
  if (options.dwDepthPairs == "on") return true;
  const int64_t unpacked = std::max(std::min(kMinCycles, p.ciParts), p.coWidth);
  const int64_t pairs =
      (std::max(std::min(kMinCycles, 2 * p.ciParts), 2 * p.coWidth) + 2 * unpacked) / 2;
  const int64_t dy = std::max(std::min(kMinCycles, p.coWidth), core.taps[0] * p.ciParts);
  const bool dyApplies = options.dwStationary == "auto" && p.coWidth <= p.parts;
  const int64_t best = dyApplies ? std::min(dy, core.taps[0] * unpacked) : core.taps[0] * unpacked;
  const int64_t depthsOfBoxes =
      core.batch * core.out[0] * ceilDiv(core.out[1] * core.out[2], p.parts);
  return (best - pairs) * core.taps[1] * core.taps[2] * depthsOfBoxes >= kMinDepthPairsSaving;
}

/// Row pairs save at least this many matmul cycles on paper (2 matmuls of 2 x coWidth moving
/// columns per box pair and dy depth pair): they add a selection per block at the store and hold
/// more SBUF beside dx (bf16, pad 1, C 32, trn2 / trn1, session 13: 8x32x32 2048 cycles 52.5 ->
/// 60.4 / 93.9 -> 99.7 us, 8x64x64 8192: 90.6 -> 98.2 / 136.0 -> 137.6, 12x64x64 12288: 129.7
/// -> 129.7 / 183.7 -> 185.4, 16x64x64 16384: 169.3 -> 167.3 / 237.7 -> 232.2, 32x64x64 32768:
/// 346.4 -> 337.5 / 442.1 -> 445.0 us).
constexpr int64_t kMinRowPairsSaving = 16384;

/// Whether row pairs (DwRowsPlan::rowPairs) apply to the packed plan `p` (passes, shareKh and
/// rowReuse decided): 4 depth slots of one C_in tile, Kh 3 at H dilation 1, Kw 3, one pass, and the
/// 2 x Kw + 4 more accumulators within the PSUM banks the transposes leave; on: wherever they
/// apply; auto: where they save at least kMinRowPairsSaving PE cycles.
bool rowPairsApply(const ConvCore& core, const DwRowsPlan& p, const isa::Geometry& geometry,
                   const ConvBwdOptions& options, int64_t accBanks) {
  if (options.dwRowPairs == "off" || !p.shareKh || p.rowReuse || p.dyStationary || p.depthPairs ||
      p.depthGroup != 2 || p.depthSlots != 4 || p.ciTiles != 1 || core.taps[1] != 3 ||
      core.taps[2] != 3 || core.dilation[1] != 1 || p.passes.size() != 1 || core.out[0] < 2)
    return false;
  const int64_t accs = core.taps[1] * core.taps[2] + 2 * core.taps[2] + 4;
  const int64_t banks = accBanks > 0 ? accBanks : ceilDiv(accs, p.accsPerBank);
  if (banks * p.accsPerBank < accs || banks + 2 > geometry.psumBanks) return false;
  const int64_t bandRows = ceilDiv(core.out[1], p.parts / std::min(core.out[2], p.parts));
  const int64_t saving = core.batch * (core.out[0] / 2) * (bandRows / 2) * 2 * 2 * p.coWidth;
  return options.dwRowPairs == "on" || saving >= kMinRowPairsSaving;
}

/// Distinct (kh, kw, C_in tile) sets a pass transposes.
int64_t xtSetsOf(const ConvCore& core, const std::vector<DwUnit>& pass, int64_t ciTiles) {
  std::vector<int64_t> keys;
  const int64_t hw = core.taps[1] * core.taps[2];
  for (const DwUnit& u : pass) keys.push_back((u.tap % hw) * ciTiles + u.ciTile);
  std::sort(keys.begin(), keys.end());
  return std::unique(keys.begin(), keys.end()) - keys.begin();
}

/// Distinct kw shifts a pass transposes when the kh taps share them.
int64_t kwSetsOf(const ConvCore& core, const std::vector<DwUnit>& pass) {
  std::vector<int64_t> kws;
  for (const DwUnit& u : pass) kws.push_back(u.tap % core.taps[2]);
  std::sort(kws.begin(), kws.end());
  return std::unique(kws.begin(), kws.end()) - kws.begin();
}

}  // namespace

std::optional<DwRowsPlan> planDwRows(const ConvCore& core, isa::Dtype dtype,
                                     const isa::Geometry& geometry, const ConvBwdOptions& options) {
  const int64_t accBanks = options.dwAccBanks;
  DwRowsPlan p;
  const int64_t e = isa::dtypeBytes(dtype);
  p.parts = tileParts(geometry);
  p.ciTiles = ceilDiv(core.cin, p.parts);
  p.ciParts = std::min(core.cin, p.parts);
  p.coWidth = std::min(core.cout, geometry.matmulFreeFp32());
  p.coSub = ceilDiv(p.coWidth, p.parts);
  p.stageX = core.in[2] * e < kMinDescriptorBytes;
  p.dyByDma = options.dyTranspose == "dma" ||
              (options.dyTranspose == "auto" && dyDmaPays(core, p.coWidth, e, p.parts));
  const int64_t bankBytes = geometry.psumBankBytes();
  p.transposeBanks = 2;
  p.accBanks = accBanks > 0 ? accBanks : geometry.psumBanks - p.transposeBanks;
  if (p.accBanks + p.transposeBanks > geometry.psumBanks) return std::nullopt;
  if (options.dwEvictVectorOnly) p.evictEngines = {isa::Engine::Vector};
  p.dyStationary = options.dwStationary == "dy";
  if (p.dyStationary && p.coWidth > p.parts)
    throw Error(fmt::format("{}: dw_stationary dy needs C_out <= {} (the PE columns), not {}",
                            core.kernel, p.parts, core.cout));
  p.depthGroup = chooseDepthGroup(core, p, geometry, options);
  p.depthPairs = p.depthGroup == 1 && depthPairsPay(core, p, geometry, options);
  if (p.depthPairs) p.depthGroup = 2;
  p.dyStationary = p.dyStationary || (p.depthGroup == 1 && options.dwStationary == "auto" &&
                                      dyStationaryPays(core, p.ciParts, p.coWidth, p.parts));
  p.depthSlots = p.depthGroup == 1 ? 1 : p.depthPairs ? 2 : p.depthGroup + core.taps[0] - 1;
  p.accGroups = p.depthGroup + (p.depthPairs ? 1 : 0);
  const int64_t accColumns = p.dyStationary ? p.ciParts : p.accGroups * p.coWidth;
  p.accsPerBank = std::max<int64_t>(1, bankBytes / (accColumns * 4));
  // packed (banks not forced): accumulators take the banks all shifts need, db one, and the
  // transposes ring through the rest
  if (p.depthGroup > 1 && accBanks == 0) {
    const int64_t shifts = core.taps[1] * core.taps[2];
    p.accBanks = std::min(p.accBanks, ceilDiv(shifts, p.accsPerBank));
    p.db = options.fuseDb && geometry.psumBanks - p.accBanks - 1 >= 2;
    p.transposeBanks = geometry.psumBanks - p.accBanks - (p.db ? 1 : 0);
  }
  // a packed accumulator serves the Kd units of its shift
  const int64_t unitsPerAcc = p.depthGroup > 1 ? core.taps[0] : 1;
  p.passes = dwPasses(core, p.ciTiles, p.accBanks * p.accsPerBank * unitsPerAcc);
  p.shareKh = p.depthGroup > 1 && core.stride[1] == 1 && core.taps[1] > 1 &&
              core.out[2] <= p.parts && !p.dyByDma && !options.noShareKh;
  p.xtRows = p.shareKh ? (core.taps[1] - 1) * core.dilation[1] + 2 : 1;
  p.rowReuse =
      p.shareKh && options.dwRowReuse != "off" &&
      (options.dwRowReuse == "on" ||
       rowLoadExposed(geometry, dtype, p.depthSlots * p.ciParts, p.depthGroup * p.coWidth));
  p.dyTBoxes = p.rowReuse ? p.xtRows : 2;
  p.rowPairs = rowPairsApply(core, p, geometry, options, accBanks);
  if (p.rowPairs) {
    p.pairAccs = 2 * core.taps[2] + 4;
    p.dyTBoxes = 4;
    if (accBanks == 0) {
      p.accBanks = ceilDiv(core.taps[1] * core.taps[2] + p.pairAccs, p.accsPerBank);
      p.db = options.fuseDb && geometry.psumBanks - p.accBanks - 1 >= 2;
      p.transposeBanks = geometry.psumBanks - p.accBanks - (p.db ? 1 : 0);
    }
  }
  p.borderEngine =
      options.dwBorderEngine == "vector" || (options.dwBorderEngine == "auto" && p.shareKh &&
                                             isa::dtypeBytes(dtype) == 2 && geometry.vectorPerfMode)
          ? isa::Engine::Vector
          : isa::Engine::GpSimd;
  p.xGroupParts = ceilDiv(p.ciParts, kQuadrant) * kQuadrant;
  if (p.shareKh && !p.stageX && options.dwXGroups != "off" && p.ciTiles == 1 &&
      p.parts / p.xGroupParts >= 2) {
    p.xGroups = p.parts / p.xGroupParts;
    const int64_t depth = windowExtent(core, 0, core.out[0]);
    p.xGroupFirst = std::clamp<int64_t>(core.padLo[0], 0, depth);
    const int64_t last = std::clamp<int64_t>(core.in[0] + core.padLo[0], p.xGroupFirst, depth);
    p.xGroupDepths = std::max<int64_t>(1, ceilDiv(last - p.xGroupFirst, p.xGroups));
  }
  for (const auto& pass : p.passes) {
    p.xtSets =
        std::max(p.xtSets, p.shareKh ? kwSetsOf(core, pass) : xtSetsOf(core, pass, p.ciTiles));
    p.passUnits = std::max(p.passUnits, static_cast<int64_t>(pass.size()));
  }
  if (p.db && accBanks == 0 &&
      p.accBanks * p.accsPerBank > p.passUnits / unitsPerAcc + p.pairAccs) {
    p.dbInAccBank = true;
    ++p.transposeBanks;
  }

  // dw out tiles: x stationary reserves the banks' whole capacity (the chunk search was tuned
  // with it: reserving only the units of a pass picks a larger chunk, 3% slower at C 32); dy
  // stationary packs up to 128 units per bank, so it reserves what the passes hold
  const int64_t outUnits = p.dyStationary ? p.passUnits : p.accBanks * p.accsPerBank;
  const int64_t outBytes = outUnits * p.coWidth * e;
  // packed: the evicted accumulators (fp32) and the selection identity
  const int64_t packedBytes =
      p.depthGroup > 1
          ? ((p.passUnits / core.taps[0] + p.pairAccs) * p.accGroups * p.coWidth + p.parts) * 4
          : 0;
  const int64_t available = geometry.sbufPartitionBytes - kReserveBytes - packedBytes -
                            2 * outBytes * (p.dyStationary ? 2 : 1);  // + [co, ci] evictions
  // shareKh: boxes stack whole rows of `groups` bands; a chunk loads c[1] padded x rows of each
  // band and up to c[1] dy rows (its boxes run a halo behind)
  const int64_t groups = p.parts / std::min(core.out[2], p.parts);
  const int64_t halo = (core.taps[1] - 1) * core.dilation[1];
  auto windowOf = [&](const Int3& c) {
    return Int3{windowExtent(core, 0, c[0]),
                p.shareKh ? groups * c[1] : windowExtent(core, 1, c[1]),
                windowExtent(core, 2, c[2])};
  };
  auto fits = [&](const Int3& c, bool preferred) {
    const Int3 w = windowOf(c);
    const Int3 dyTile{c[0], p.shareKh ? groups * c[1] : c[1], c[2]};
    if (!stepsFit(w) || !stepsFit(dyTile)) return false;
    const int64_t windowBytes = p.ciTiles * product(w) * e;
    const int64_t dyBytes = p.dyByDma ? 0 : p.coSub * product(dyTile) * e;
    // shareKh: one xT ring of rows; else two box buffers of every set
    const int64_t xtDepths = std::max(w[0], p.xGroupFirst + p.xGroups * p.xGroupDepths);
    const int64_t xtBytes = p.xtSets * xtDepths * p.ciParts * e * (p.shareKh ? p.xtRows : 2);
    const int64_t bytes = 2 * (windowBytes * (p.stageX ? 2 : 1) + dyBytes) +
                          p.dyTBoxes * c[0] * p.coWidth * e + xtBytes;
    const int64_t cap = p.depthGroup > 1 ? kPackedWindowCap : kWindowCap;
    return bytes <= available && (!preferred || windowBytes <= cap);
  };
  // Shrink H first, then W, then D: the x transposes repeat per input depth of a chunk, so
  // chunks keep their depth.
  auto search = [&](bool preferred) -> std::optional<Int3> {
    if (p.shareKh) {  // whole D and W, more x rows of each band than the halo
      auto fitsRows = [&](int64_t rows) {
        return fits({core.out[0], rows, core.out[2]}, preferred);
      };
      int64_t lo = halo + 1, hi = ceilDiv(core.out[1], groups) + halo;
      if (!fitsRows(lo)) return std::nullopt;
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (fitsRows(mid)) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      return Int3{core.out[0], lo, core.out[2]};
    }
    const std::optional<Int3> c =
        largestChunk({core.out[1], core.out[2], core.out[0]}, [&](const Int3& hwd) {
          return fits({hwd[2], hwd[0], hwd[1]}, preferred);
        });
    if (!c) return std::nullopt;
    return Int3{(*c)[2], (*c)[0], (*c)[1]};
  };
  std::optional<Int3> chunk = search(true);
  if (!chunk) chunk = search(false);
  if (!chunk && p.shareKh) {
    ConvBwdOptions perShift = options;
    perShift.noShareKh = true;
    return planDwRows(core, dtype, geometry, perShift);
  }
  if (!chunk) return std::nullopt;
  p.chunk = *chunk;
  p.window = windowOf(p.chunk);
  if (p.depthGroup > p.chunk[0]) {  // the first group of every accumulator must be whole
    if (options.dwDepthGroup >= 2)
      throw Error(fmt::format("{}: dw_depth_group {} exceeds the {} dy depths of a chunk",
                              core.kernel, options.dwDepthGroup, p.chunk[0]));
    ConvBwdOptions unpacked = options;
    unpacked.dwDepthGroup = 1;
    unpacked.dwDepthPairs = "off";
    return planDwRows(core, dtype, geometry, unpacked);
  }
  const int64_t coGroupParts = ceilDiv(p.coWidth, kQuadrant) * kQuadrant;
  if (p.shareKh && !p.dyByDma && p.coSub == 1 && options.dwDyGroups != "off" &&
      p.parts / coGroupParts >= 2) {
    p.dyGroups = p.parts / coGroupParts;
    p.dyGroupParts = coGroupParts;
    p.dyGroupDepths = ceilDiv(p.chunk[0], p.dyGroups);
  }
  if (p.db && p.dyGroups > 1) {  // db from the dy tiles on GpSimd: no PSUM slot or bank
    p.dbOnGpSimd = true;
    if (!p.dbInAccBank) ++p.transposeBanks;
    p.dbInAccBank = false;
  }
  p.boxW = std::min(p.chunk[2], p.parts);
  p.boxH = p.shareKh ? groups : std::min(p.chunk[1], p.parts / p.boxW);
  const int64_t mergedBytes = p.coWidth * p.boxH * p.dyGroupDepths * p.chunk[1] * p.chunk[2] * e;
  p.dyBandsMerged = p.dyGroups > 1 && core.out[1] % p.boxH == 0 && options.dwDyLoads != "bands" &&
                    (options.dwDyLoads == "merged" || mergedBytes <= kDwLoadPieceBytes);
  return p;
}

DwBoxesPlan planDwBoxes(const ConvCore& fwd, isa::Dtype dtype, const isa::Geometry& geometry) {
  DwBoxesPlan plan;
  const int64_t e = isa::dtypeBytes(dtype);
  plan.parts = tileParts(geometry);
  const int64_t parts = plan.parts;
  const int64_t maxCo = geometry.matmulFreeFp32();  // moving free size of one matmul
  plan.coWidth = std::min(fwd.cout, maxCo);
  plan.coSub = ceilDiv(plan.coWidth, parts);
  const int64_t fixed =
      (plan.xtRing * parts + 2 * maxCo + 2 * plan.tapGroup * maxCo) * e + kReserveBytes;
  const int64_t available = geometry.sbufPartitionBytes - fixed;
  auto windowOf = [&](const Int3& c) {
    return Int3{windowExtent(fwd, 0, c[0]), windowExtent(fwd, 1, c[1]), windowExtent(fwd, 2, c[2])};
  };
  auto fits = [&](const Int3& c, bool preferred) {
    const Int3 w = windowOf(c);
    if (!stepsFit(w) || !stepsFit(c)) return false;
    const int64_t windowBytes = product(w) * e;
    if (2 * (2 * windowBytes + plan.coSub * product(c) * e) > available)
      return false;  // window + staging
    return !preferred || (windowBytes <= kBoxesWindowCap && product(c) <= kBoxesChunkCap);
  };
  std::optional<Int3> chunk = largestChunk(fwd.out, [&](const Int3& c) { return fits(c, true); });
  if (!chunk) chunk = largestChunk(fwd.out, [&](const Int3& c) { return fits(c, false); });
  if (chunk) {
    plan.chunk = *chunk;
    plan.window = windowOf(plan.chunk);
    plan.box = blockFor(fwd, plan.chunk, plan.window, parts);
    return plan;
  }
  auto columnsFit = [&](const Int3& c) {
    return stepsFit(c) && 2 * (plan.tapGroup + plan.coSub) * product(c) * e <= available;
  };
  chunk = largestChunk(fwd.out, columnsFit);
  if (!chunk)
    throw Error(fmt::format("{}: the x columns of one dy position do not fit SBUF", fwd.kernel));
  plan.perTap = true;
  plan.chunk = *chunk;
  plan.window = *chunk;
  ConvCore unit = fwd;
  unit.stride = {1, 1, 1};
  plan.box = blockFor(unit, plan.chunk, plan.window, parts);
  return plan;
}

ConvBwdPlan planConvBwd(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                        const ConvBwdOptions& options) {
  ConvBwdPlan plan;
  const std::string& method = options.dwMethod;
  if (method != "auto" && method != "boxes" && method != "rows")
    throw Error(fmt::format("{}: dw_method '{}' is not auto, boxes or rows", core.kernel, method));
  // Beside the declared range: with dw_overlap, `geometry` holds only the banks dx leaves.
  if (options.dwAccBanks < 0 || options.dwAccBanks > geometry.psumBanks - 2)
    throw Error(fmt::format("{}: dw_acc_banks {} is outside 1..{} (2 PSUM banks hold transposes)",
                            core.kernel, options.dwAccBanks, geometry.psumBanks - 2));
  if (options.dyTranspose != "auto" && options.dyTranspose != "pe" && options.dyTranspose != "dma")
    throw Error(fmt::format("{}: dy_transpose '{}' is not auto, pe or dma", core.kernel,
                            options.dyTranspose));
  if (options.dwStationary != "auto" && options.dwStationary != "x" && options.dwStationary != "dy")
    throw Error(fmt::format("{}: dw_stationary '{}' is not auto, x or dy", core.kernel,
                            options.dwStationary));
  std::optional<DwRowsPlan> rows;
  if (method != "boxes") rows = planDwRows(core, dtype, geometry, options);
  if (!rows && method == "rows")
    throw Error(
        fmt::format("{}: dw_method rows does not fit SBUF for this shape (use auto)", core.kernel));
  if (rows) {
    plan.dwMethod = DwMethod::Rows;
    plan.rows = std::move(*rows);
  } else {
    plan.boxes = planDwBoxes(core, dtype, geometry);
  }
  return plan;
}

}  // namespace neuronsim::kernels
