#pragma once
// How the conv core is tiled onto SBUF and PSUM: resident filter groups, input windows, blocks.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "isa/dtype.h"
#include "isa/geometry.h"
#include "kernels/conv/conv_core.h"

namespace neuronsim::kernels {

/// The schedule choices of the conv core a user may force (0 / auto: the planner decides).
struct ConvOptions {
  int64_t chunkPositions = 0;    ///< preferred output positions per chunk (0: auto)
  int64_t psumBuffers = 0;       ///< PSUM accumulation blocks in flight (0: auto, 4)
  std::string tapPack = "auto";  ///< auto | off: kw taps sharing a matmul on partition slots
  std::string evict = "auto";    ///< auto (Vector and Scalar in turn) | vector | scalar
  std::string wPairs = "auto";   ///< auto | off: two W-neighbour outputs per packed matmul
  /// auto | filters | positions: the matmul operand TensorE holds when outputs are paired
  std::string stationary = "auto";
  /// auto | on | off: rolling-plane slot pairs share their loads by VectorE copies (on) or every
  /// slot loads its whole plane (off); auto: on unless matmuls are fp32
  std::string slotCopies = "auto";
  /// auto | vector | spread: the engines making the slot copies (spread: VectorE and ScalarE in
  /// turn); auto: spread where VectorE's copies of a plane outlast the plane's matmuls
  std::string slotCopyEngines = "auto";
  /// auto | on | off: rolling planes with filters as the stationary compute two output planes
  /// per matmul (ConvPlan::planePairs); auto: where the planner's PE estimate says it pays
  std::string planePairs = "auto";
  /// Not a parameter: the prefix of these options' parameter names, for errors (dx_ for
  /// conv3d_bwd's dx)
  std::string paramPrefix;
  /// Not a parameter: called once after the tiles are allocated (item -1) and after each chunk's
  /// work is emitted (chunk item, item count), so a caller can interleave another program's
  /// emission with the core's (conv3d_bwd's dw).
  std::function<void(int64_t item, int64_t items)> afterChunk;
};

/// Sub-block results in flight with positions as the stationary (a PSUM ring and an SBUF ring).
inline constexpr int kPairRing = 8;
/// Rolling planes: chunks whose planes load ahead of the one computed.
inline constexpr int64_t kRingLookahead = 2;

/// The tiling of one ConvCore. Extents are (D, H, W).
struct ConvPlan {
  int64_t parts = 0;     ///< partitions of a full channel tile (the machine's partitions)
  int64_t ciTiles = 1;   ///< C_in tiles of `parts` partitions (the contraction)
  int64_t ciParts = 1;   ///< partitions of the first C_in tile: min(C_in, parts)
  int64_t coGroup = 1;   ///< output channels whose filters are resident together
  Int3 chunk{1, 1, 1};   ///< output extent computed from one input window
  Int3 window{1, 1, 1};  ///< virtual-input extent of a full chunk's window
  /// packed windows of whole planes: chunks are single output planes and one window tile holds a
  /// ring of `window[0]` input planes, so each chunk loads only the plane it adds
  bool rollingPlanes = false;
  /// Rolling planes with slots of a quadrant: slot pairs (2k, 2k + 1) share a partition half,
  /// so each loads half of a plane's columns and VectorE copies its share into the other
  bool slotCopies = false;
  /// Rolling planes, filters as the stationary, filter columns within a partition half: chunks
  /// are two output planes p, p + 1 (the last one plane when D is odd). Per (kh, kw group) the
  /// matmul of window plane z holds tap kd = z's filter columns for plane p in columns
  /// [0, F) and tap kd = z - 1's for plane p + 1 in [half, half + F) (zeros where the tap does
  /// not exist), so Kd + 1 matmuls serve both planes instead of 2 x Kd; PSUM rows from the half
  /// accumulate plane p + 1, evicted within their half (A1) to out partitions from the half
  bool planePairs = false;
  /// Slot copies: the engines making them in turn (VectorE, or VectorE and ScalarE)
  std::vector<isa::Engine> copyEngines{isa::Engine::Vector};
  Int3 stage{1, 1, 1};   ///< x_in extent a window can hold (staging tile, input dilation only)
  bool dilated = false;  ///< the core has input dilation
  /// staging tiles exist: a window with inserted zeros or a border is filled by a contiguous
  /// DMA to staging and a strided GpSimd copy
  bool staged = false;
  /// no dense window fits: one compact [chunk] column per tap (im2col by DMA); `window` then
  /// equals `chunk`
  bool perTap = false;
  int64_t pack = 1;        ///< taps per matmul: consecutive kw taps on partition slots (C_in <= 64)
  int64_t slotParts = 0;   ///< partitions per slot when pack > 1 (parts / pack)
  int64_t tapColumns = 1;  ///< filter columns per C_in tile: taps, or tap groups when packed
  /// W-neighbour outputs per packed matmul (1 or 2): with 2, the stationary holds the filters of
  /// output offset g (slot s meets tap kw = s - g) in columns [g * pairStride, + C_out), the moving
  /// steps 2 along W and PSUM rows [pairStride, + C_out) hold the odd outputs (`phase` W is 2)
  int64_t pairs = 1;
  int64_t pairStride = 0;  ///< PSUM rows / filter columns between the two offsets' blocks
  /// Paired outputs only: window positions are the stationary ([(slot, C_in), <= 128 output
  /// pairs]) and the packed filters the moving ([(slot, C_in), (2 offsets, C_out)]), so a matmul
  /// takes 64 PE cycles for 128 pairs (I2); each sub-block's [pairs, (g, C_out)] result is
  /// evicted and PE-transposed into the block's [(g, C_out), pairs] PSUM tile
  bool positionsStationary = false;
  int64_t pairColumns = 0;  ///< PSUM columns of one sub-block result (positions stationary)
  /// Positions as the stationary with blocks of whole output rows, one depth each (no bias):
  /// up to one block per partition quadrant (32) is computed together, one PE transpose per W
  /// offset serves a sub-block of every block, and each offset's eviction and the group's store
  /// cover all of the quadrants' partitions
  bool quadrantGroups = false;
  /// Quadrant groups: partitions per block in the group's tiles (32, or 64 for C_out 33..64)
  int64_t groupParts = 0;
  Int3 phase{1, 1, 1};      ///< output period whose positions share the taps that meet x elements
  Int3 block{1, 1, 1};      ///< outputs of one PSUM accumulation, `phase` apart (at most 512)
  int64_t psumBuffers = 4;  ///< PSUM accumulation blocks in flight
  /// engines evicting PSUM blocks in turn (Scalar where Vector cannot apply the activation)
  std::vector<isa::Engine> evictEngines{isa::Engine::Vector, isa::Engine::Scalar};
  /// engines filling window pieces (border zeros, staged copies) in turn
  std::vector<isa::Engine> placeEngines{isa::Engine::Vector, isa::Engine::Scalar,
                                        isa::Engine::Vector, isa::Engine::GpSimd};
};

/// Partitions of a full channel tile on `geometry`: its partitions, at most what one matmul
/// contracts over and holds stationary.
int64_t tileParts(const isa::Geometry& geometry);

/// The output period per axis after which the taps meeting x elements repeat:
/// inputDilation / gcd(stride, inputDilation) (1 without input dilation).
Int3 outputPhase(const ConvCore& core);

/// Window extent along `axis` for `outputs` outputs.
int64_t windowExtent(const ConvCore& core, int axis, int64_t outputs);

/// Axis steps of a row-major [d, h, w] box fit the free-axis fields (int16 steps, uint16 sizes)
/// where they matter, with the D and H steps scaled by `scaleD` and `scaleH`.
bool stepsFit(const Int3& extent, int64_t scaleD = 1, int64_t scaleH = 1);
/// The largest chunk of `out` that `fits` (monotone), shrinking D first, then H, then W.
std::optional<Int3> largestChunk(const Int3& out, const std::function<bool(const Int3&)>& fits);
/// The output box of one accumulation inside `chunk` (at most `maxFree` positions, `phase` apart)
/// whose strided view of a `window`-sized tile fits the access-pattern fields.
Int3 blockFor(const ConvCore& core, const Int3& chunk, const Int3& window, int64_t maxFree,
              const Int3& phase = {1, 1, 1});

/// Chooses the tiling for `dtype` within `geometry`'s SBUF. Throws neuronsim::Error naming the
/// kernel and the culprit when even the smallest tiling does not fit, or a forced option is
/// out of range.
ConvPlan planConv(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                  const ConvOptions& options = {});

/// The conv core schedule options of the parameters `prefix` + knob, for the knobs named in
/// `knobs` (all when empty: chunk_positions, psum_buffers, tap_pack, evict_engine, w_pairs,
/// stationary, slot_copies); the others keep their defaults (auto).
ConvOptions convOptions(const ParamValues& params, const std::string& prefix = "",
                        const std::vector<std::string>& knobs = {});
/// Those parameters as declared schedule knobs (default auto, sweep candidates), for the
/// registry entries of the kernels built on the conv core (with a prefix, each meaning starts
/// with the prefix's word: "dx ...").
std::vector<ParamSpec> convScheduleParams(const std::string& prefix = "",
                                          const std::vector<std::string>& knobs = {});

}  // namespace neuronsim::kernels
