#pragma once
// matmul's schedule choices (tiling mode, block and chunk sizes, buffer counts, queue spread,
// eviction engines): the parameters that declare them and their automatic resolution.

#include <cstdint>
#include <vector>

#include "isa/dtype.h"
#include "isa/geometry.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

constexpr int64_t kMatmulPart = 128;  ///< K and M tile (partitions)
constexpr int64_t kMatmulFree = 512;  ///< N tile (one PSUM bank of fp32)

enum class MatmulMode {
  BothResident,  ///< all of lhsT and rhs in SBUF, loaded once in the order of use
  Resident,      ///< rhs column groups resident in SBUF, lhsT streamed per 128-row M tile
  KBlocked,      ///< an output block stays in PSUM while K streams through in chunks
};
enum class EvictEngines { Alternate, Vector, Scalar };

/// A resolved schedule: every choice made.
struct MatmulSchedule {
  MatmulMode mode = MatmulMode::Resident;
  int64_t nTile = kMatmulFree;   ///< both: rhs columns per PSUM tile (a column pass)
  int64_t blockM = 1;            ///< kblocked: M tiles (128 rows) per PSUM block
  int64_t blockN = 1;            ///< kblocked: N tiles (512 columns) per PSUM block
  int64_t kChunk = 1;            ///< kblocked: K tiles per operand load
  int64_t loadBuffers = 2;       ///< kblocked: operand chunk ring; resident: lhsT buffers
  int64_t loadChunks = 4;        ///< resident: DMAs per multi-K-tile load
  int64_t psumBuffers = 4;       ///< PSUM banks the accumulators rotate through
  bool rampChunks = true;        ///< kblocked: the first block's chunks grow 1, 2, 4, ... K tiles
  int64_t outBuffers = 4;        ///< SBUF staging tiles for evicted results
  int64_t loadQueues = 1;        ///< Sync-triggered load queues from q0 (MatmulQueues)
  bool scalarRhs = false;        ///< rhs loads triggered by ScalarE on its own queues
  int64_t storeQueues = 2;       ///< GpSimd-triggered store queues, the machine's last ones
  bool syncStores = false;       ///< every other store triggered by Sync instead of GpSimd
  int64_t storeTiles = 1;        ///< direct results of consecutive M tiles per store DMA
  int64_t narrowStoreTiles = 1;  ///< both: the same in a last column pass narrower than nTile
  isa::Engine sideEngine = isa::Engine::Sync;  ///< both: triggers the K-tail loads
  int64_t kTailDelay = 0;  ///< both: Sync loads triggered after the first tiles, before the K tails
  EvictEngines evict = EvictEngines::Alternate;
  int64_t transposedRows = 0;  ///< both: the last rows of M (at most 512) computed as out^T
};

/// How matmul spreads its DMAs over the machine's queues, in units of an eighth of them (16
/// queues: Sync loads q0-q5, Sync stores q6-q7, small transfers q8-q9, ScalarE's rhs q10-q11,
/// GpSimd stores up to q12-q15). Throws neuronsim::Error below 8 queues.
struct MatmulQueues {
  explicit MatmulQueues(const isa::Geometry& geometry);
  int32_t unit;  ///< an eighth of the machine's DMA queues
  int32_t maxLoads() const { return 3 * unit; }
  int32_t syncStores() const { return 3 * unit; }  ///< first of `unit` queues
  int32_t side() const { return 4 * unit; }        ///< first of `unit` queues
  int32_t scalarRhs() const { return 5 * unit; }   ///< first of `unit` queues
  int32_t maxStores() const { return 2 * unit; }
};

/// The schedule parameters of `matmul` (all default to automatic).
std::vector<ParamSpec> matmulScheduleParams();

/// Resolves the parameters for lhsT [k, m] by rhs [k, n] at `dtype` on `geometry`: what is given
/// is kept, the rest chosen. Throws neuronsim::Error "matmul: parameter X ..." when a given value
/// is out of range or the buffers it implies do not fit.
MatmulSchedule resolveMatmulSchedule(const ParamValues& params, int64_t k, int64_t m, int64_t n,
                                     isa::Dtype dtype, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
