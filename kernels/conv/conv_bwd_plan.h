#pragma once
// The conv3d_bwd planner: every schedule decision of dw as a plain struct, computed from the
// shape, the machine geometry and the schedule parameters; the emitters only read it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/dtype.h"
#include "isa/geometry.h"
#include "isa/instruction.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// Rows: bytes a dw load DMA carries at most (loads are cut along depth into pieces about this
/// size, so large chunks spread over several DMA queues)
constexpr int64_t kDwLoadPieceBytes = 128 * 1024;

/// How dw puts positions onto partitions.
enum class DwMethod {
  /// Boxes of <= partitions dy positions; dy and every tap's strided x view are PE-transposed per
  /// box.
  Boxes,
  /// Partitions = an (h, w) box of dy positions, D on the free axis: x is transposed once per
  /// (kh, kw) shift and input depth, so the kd taps reuse it (kd is a free-axis offset).
  Rows,
};

/// One dw accumulator: a filter tap and a C_in tile, in its pass's PSUM.
struct DwUnit {
  int64_t tap = 0;  ///< row-major (kd, kh, kw) tap index
  int64_t ciTile = 0;
};

/// The schedule choices a user may force (`auto` / 0: the planner decides).
struct ConvBwdOptions {
  std::string dwMethod = "auto";      ///< auto | boxes | rows
  int64_t dwAccBanks = 0;             ///< PSUM banks for dw accumulators (Rows), 0: auto
  std::string dyTranspose = "auto";   ///< Rows: auto | pe | dma (how dy reaches [positions, co])
  std::string dwStationary = "auto";  ///< Rows: auto | x | dy (which operand the PE holds)
  int64_t dwDepthGroup = 0;           ///< Rows: dy depths per packed matmul, 0: auto, 1: no packing
  /// auto | off: with dx, dw's steps are emitted between dx's chunks (Rows only), so TensorE
  /// runs dw while dx waits for its loads
  std::string dwOverlap = "auto";
  int64_t dwLead = -1;     ///< overlapped: dw steps emitted before dx's first chunk (-1: auto)
  bool fuseDb = false;     ///< db is requested too: a packed Rows plan computes it from dw's dyT
  bool noShareKh = false;  ///< planner-internal: a packed plan whose row-group boxes do not fit
  /// set when dw overlaps dx (which then evicts on Scalar): dw evicts PSUM on Vector only, so
  /// neither program's evictions queue behind the other's on an in-order engine
  bool dwEvictVectorOnly = false;
  /// auto | off: shareKh x windows in partition groups of depths (DwRowsPlan::xGroups)
  std::string dwXGroups = "auto";
  /// auto | off: shareKh dy tiles in partition groups of depths (DwRowsPlan::dyGroups)
  std::string dwDyGroups = "auto";
  /// auto | on | off: shareKh matmuls of one xT row run together (DwRowsPlan::rowReuse)
  std::string dwRowReuse = "auto";
  /// auto | on | off: depth pairs where depth packing cannot apply (DwRowsPlan::depthPairs)
  std::string dwDepthPairs = "auto";
  /// auto | on | off: dy box pairs in shareKh matmuls (DwRowsPlan::rowPairs)
  std::string dwRowPairs = "auto";
  /// auto | gpsimd | vector: the engine zeroing dw's x window borders (DwRowsPlan::borderEngine)
  std::string dwBorderEngine = "auto";
  /// auto | bands | merged: grouped dy loads per band or for all bands (DwRowsPlan::dyBandsMerged)
  std::string dwDyLoads = "auto";
};

/// The dw plan of the Rows method (see DwMethod::Rows). Extents are (D, H, W) of dy.
struct DwRowsPlan {
  int64_t parts = 0;  ///< partitions of a full tile (the machine's partitions)
  int64_t ciTiles = 1;
  int64_t ciParts = 1;   ///< min(C_in, parts)
  int64_t coWidth = 1;   ///< C_out columns per pass (<= 512, one PSUM bank of fp32)
  int64_t coSub = 1;     ///< `parts`-channel pieces of coWidth
  Int3 chunk{1, 1, 1};   ///< dy extent per load
  Int3 window{1, 1, 1};  ///< x window extent of a full chunk
  int64_t boxH = 1;      ///< dy rows per partition box
  int64_t boxW = 1;      ///< dy columns per partition box (boxH * boxW <= parts)
  bool stageX = false;   ///< x rows are under one DMA descriptor: staged then copied
  /// dy boxes arrive transposed by one DMA transpose from HBM each (no dy chunk, no PE
  /// transposes of dy); otherwise dy chunks are loaded and PE-transposed per box
  bool dyByDma = false;
  /// dyT [positions, co] is the stationary and one matmul per (shift, depth) multiplies all of
  /// a shift's kd taps (moving xT [positions, kd, ci]) into accumulators [co, ci]; otherwise xT
  /// [positions, ci] is the stationary and dyT the moving, one matmul per unit and depth
  bool dyStationary = false;
  /// Depth packing (x stationary, stride and dilation 1 along D, one C_in tile): one matmul
  /// multiplies stationary xT [positions; depthSlots depths, ci] by moving dyT [positions;
  /// depthGroup depths, co], so slot j meets dy depth g at tap kd = j - g; the accumulator of a
  /// (kh, kw) shift is [depthSlots x ci, depthGroup x coWidth] and a selection matmul per kd adds
  /// its blocks (j = kd + g, g) before the store. depthGroup 1: no packing (one matmul per tap).
  int64_t depthGroup = 1;
  int64_t depthSlots = 1;  ///< depthGroup + Kd - 1 when packed (2 with depthPairs)
  /// Depth pairs (Kd 3, D stride and dilation 1, C_in within half the PE columns but too wide
  /// for 4 slots): depthGroup 2 and 2 slots, window depths d0 + 1 and d0 + 2, so slot j meets dy
  /// depth d0 + g at kd = 1 + j - g (all 4 blocks live); the edge taps (kd 0 of dy d0, kd 2 of dy
  /// d0 + 1) are unpacked matmuls into partitions 0.. (the start-partition rule, A1): kd 0 into
  /// block (slot 0, group 1), kd 2 into a third column group. 256 PE cycles per dy depth pair
  /// and shift at C 64, against 6 x 64 unpacked.
  bool depthPairs = false;
  int64_t accGroups = 1;  ///< column groups of a packed accumulator: depthGroup, 3 with depthPairs
  /// Packed, H stride 1, W_out within the partitions: dy rows are cut into boxH bands of
  /// ceil(H_out / boxH) rows and a partition box holds row hh of every band (position (r, w) is
  /// dy row r x bandRows + hh), so the xT row of one kw shift serves every kh tap (kh is a row
  /// offset) and x is transposed per kw and row once, not per (kh, kw). A chunk loads chunk[1]
  /// padded x rows of every band (window: boxH x chunk[1] rows) and whole D and W, and runs the
  /// boxes whose last x row it loads (dy rows a halo behind); xT keeps a ring of xtRows rows that
  /// runs on across chunks, so no x row is loaded or transposed twice within a band.
  bool shareKh = false;
  int64_t xtRows = 1;  ///< xT rows in the ring when shareKh: (Kh - 1) x H dilation + 2
  /// shareKh: the matmuls of xT row r (per kw and depth group: tap kh against dy box r - kh x
  /// dilation, for every kh) run one after the other, so its stationary loads once for Kh
  /// matmuls, not once per matmul; box hh's turn multiplies row hh and the last box's the rows
  /// after it. Chosen where the stationary's load outlasts the matmul it hides behind (P1, I2:
  /// fp32 on Trn2).
  bool rowReuse = false;
  int64_t dyTBoxes = 2;  ///< dyT box buffers: xtRows with rowReuse (the boxes a row still meets)
  /// Row pairs (shareKh, 4 depth slots of C_in <= 32, Kh and Kw 3, one pass): dy boxes (hh, hh +
  /// 1), hh even, run together. Box hh's kh 0 and box hh + 1's kh 2 matmuls keep today's form; x
  /// rows (hh + 1, hh + 2) x depths (d0 + 1, d0 + 2) against each box's dy depths (d0, d0 + 1) have
  /// all 8 blocks live (a centre accumulator per box and kw); the edge x depths d0 (kd 0, dy d0)
  /// and d0 + 3 (kd 2, dy d0 + 1) at those rows and 3 kw (6 slots, kw outer) against dy of both
  /// boxes are a 4-slot and a 2-slot matmul. 16 matmuls per pair and depth pair, not 18; every
  /// block is added by selection matmuls at the store. xT rows sit at ring slot (row + 1) mod
  /// xtRows (4: no pair wraps), dyT box hh at slot hh mod dyTBoxes (4) of one tile.
  bool rowPairs = false;
  int64_t pairAccs = 0;  ///< rowPairs: accumulators after the pass's sets (2 x Kw centre, 4 edge)
  /// shareKh, C_in within half the partitions: the x window's depths are xGroups blocks of
  /// xGroupDepths on partition groups xGroupParts apart (a multiple of 32, A1), so one PE
  /// transpose of every partition gives xGroups depths' xT (128 partitions at C_in 32: a
  /// transpose of 128 cycles for 4 depths, not 4 of 64). 1: one depth per transpose
  int64_t xGroups = 1;
  int64_t xGroupParts = 0;  ///< partitions per group (C_in rounded up to 32)
  /// window depths per group: ceil(depths holding x / xGroups); the padding depths are not loaded
  /// or transposed (xT keeps zeros there)
  int64_t xGroupDepths = 1;
  int64_t xGroupFirst = 0;  ///< window depth of group 0's first depth (the first holding x)
  /// shareKh, dy by PE, C_out within half the partitions: the dy tile's depths are dyGroups
  /// blocks of dyGroupDepths on partition groups dyGroupParts apart (as xGroups), so one PE
  /// transpose of every partition gives dyGroups depths' dyT. 1: one depth per transpose
  int64_t dyGroups = 1;
  int64_t dyGroupParts = 0;   ///< partitions per group (C_out rounded up to 32)
  int64_t dyGroupDepths = 1;  ///< chunk depths per group: ceil(chunk depth / dyGroups)
  /// dyGroups with bands of equal rows: one DMA per partition group carries a chunk's rows of
  /// every band, not one DMA per band and group; auto where that DMA moves at most
  /// kDwLoadPieceBytes (small chunks, whose Sync triggers of 600 ns each bound dw's first load)
  bool dyBandsMerged = false;
  /// db from the dyT tiles (packed, with fuseDb): per box and depth a matmul of a ones column
  /// [positions, 1] by dyT [positions, co] accumulates db [1, co] in a PSUM bank of its own
  bool db = false;
  /// db (dyGroups > 1): GpSimd adds every dy row of the grouped dy tiles into an fp32 tile
  /// [parts; bands, group depths, W], reduced and its groups summed once at the end, so db takes
  /// no TensorE time and no PSUM
  bool dbOnGpSimd = false;
  /// db accumulates in an accumulator slot no pass uses (the last of the last bank), so it needs
  /// no PSUM bank of its own and the transposes get one more
  bool dbInAccBank = false;
  /// the engine zeroing the x window borders each load leaves (and placing staged rows): VectorE
  /// where kh taps are shared in a 16-bit dtype on a machine with VectorE's performance mode
  /// (GpSimd there also carries db's adds, the fills and, beside dx, dx's staged copies and
  /// store triggers), else GpSimd
  isa::Engine borderEngine = isa::Engine::GpSimd;
  /// engines evicting PSUM in turn (transpose banks, accumulators)
  std::vector<isa::Engine> evictEngines{isa::Engine::Vector, isa::Engine::Scalar};
  int64_t accBanks = 6;  ///< PSUM banks holding accumulators
  /// accumulators ([ci, coWidth], [co, ci], or packed [depthSlots x ci, depthGroup x coWidth])
  /// fp32 per bank
  int64_t accsPerBank = 1;
  int64_t transposeBanks = 2;  ///< PSUM banks ringing the transpose outputs
  /// Passes over every dy chunk: each accumulates these units (grouped by (kh, kw) so the x
  /// transposes of a shift serve all its kd taps).
  std::vector<std::vector<DwUnit>> passes;
  /// largest number of transposed x sets in a pass: (kh, kw, C_in tile), or kw when shareKh
  int64_t xtSets = 1;
  int64_t passUnits = 1;  ///< largest number of units in a pass
};

/// The dw plan of the Boxes method: per C_in tile, C_out slab and tap group, every dy chunk.
struct DwBoxesPlan {
  int64_t parts = 0;     ///< partitions of a full tile
  int64_t coWidth = 1;   ///< C_out columns per pass (<= 512)
  int64_t coSub = 1;     ///< `parts`-channel pieces of coWidth
  int64_t tapGroup = 6;  ///< taps accumulating at once (one PSUM bank each)
  int64_t xtRing = 12;   ///< transposed x tiles: the box being multiplied and the next
  Int3 chunk{1, 1, 1};   ///< dy extent per load
  Int3 window{1, 1, 1};  ///< x window extent of a full chunk
  Int3 box{1, 1, 1};     ///< dy positions per transpose (<= parts)
  bool perTap = false;   ///< no x window fits: per-tap im2col columns (window = chunk)
};

/// Every decision of one conv3d_bwd run.
struct ConvBwdPlan {
  DwMethod dwMethod = DwMethod::Boxes;
  DwRowsPlan rows;    ///< valid when dwMethod == Rows
  DwBoxesPlan boxes;  ///< valid when dwMethod == Boxes
};

/// Plans conv3d_bwd for the forward problem `forward`. Throws neuronsim::Error naming the kernel
/// when a forced choice does not fit.
ConvBwdPlan planConvBwd(const ConvCore& forward, isa::Dtype dtype, const isa::Geometry& geometry,
                        const ConvBwdOptions& options = {});

/// The schedule options of conv3d_bwd's parameters dw_method and dw_acc_banks.
ConvBwdOptions bwdOptions(const ParamValues& params);

/// The Rows plan, or nothing when its tiles do not fit SBUF / PSUM.
std::optional<DwRowsPlan> planDwRows(const ConvCore& forward, isa::Dtype dtype,
                                     const isa::Geometry& geometry, const ConvBwdOptions& options);

/// The Boxes plan. Throws neuronsim::Error naming the kernel when not even one dy position's x
/// columns fit SBUF.
DwBoxesPlan planDwBoxes(const ConvCore& forward, isa::Dtype dtype, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
