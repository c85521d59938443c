#pragma once
// max_pooling_3d_backward's selection: which tap of each window gets the window's gradient
// (the first input equal to output_tensor, or the last NaN where output_tensor is NaN).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/builder/kernel_builder.h"
#include "kernels/builder/pipeline.h"
#include "kernels/pooling/pooling_axis.h"
#include "kernels/pooling/pooling_io.h"
#include "kernels/pooling/pooling_plan.h"

namespace neuronsim::kernels {

/// One window tap (kd, kh, kw) restricted to the outputs of a chunk it reaches.
struct TapBox {
  Spatial tap{};
  Box reach;  ///< outputs whose tap lands inside the chunk's loaded inputs (not padding)
  Box owned;  ///< outputs whose tap lands inside the chunk's owned inputs
};

/// The taps of `axes`' window that reach some output of `chunk`, in (kd, kh, kw) order.
std::vector<TapBox> chunkTaps(const std::array<PoolAxis, 3>& axes, const PoolChunk& chunk);

/// `tile` (whose axes cover outputs `base`) restricted to the outputs `r`.
Tile outputView(const Tile& tile, const Box& base, const Box& r);

/// `tile` (whose axes cover inputs `base`) at the inputs tap `t` of outputs `r` reads.
Tile inputView(const std::array<PoolAxis, 3>& axes, const Tile& tile, const Box& base,
               const Spatial& t, const Box& r);

/// A part of the output box whose key sweeps run on one engine.
struct Lane {
  Box box;
  isa::Engine engine = isa::Engine::Vector;
};

/// The output box cut along its outermost axis longer than 1 so that about `gpsimdPercent`
/// of it goes to a GpSimd lane and the rest to a VectorE lane; empty lanes are dropped.
std::vector<Lane> splitLanes(const Box& box, int64_t gpsimdPercent);

/// One chunk's tiles, each a [rows, box] view over the chunk's inputs or outputs box.
struct SelectTiles {
  Tile in;                           ///< forward input (inputs box)
  Tile notNan;                       ///< 1 where `in` is not NaN, 0 where it is (inputs box, keys)
  Tile ot;                           ///< output_tensor in SBUF (outputs box)
  std::optional<Tile> otPsum;        ///< a copy in PSUM, which VectorE compares stream at N (I2)
  Tile sel;                          ///< result: the chosen tap's index in `taps`, or none of them
  Tile last;                         ///< the NaN sweep's accumulator (keys)
  Tile lastFinal;                    ///< the last NaN's index: PSUM when it fits, else `last`
  Tile flags;                        ///< 1 where output_tensor is NaN (keys)
  const BufferRing* keys = nullptr;  ///< flat key tiles of the outputs box
  int32_t rows = 0;
};

/// Writes `tiles.sel`: per output of `out`, the index in `taps` of the first tap whose input
/// equals output_tensor (taps.size() when none), or where output_tensor is NaN of the last tap
/// holding a NaN (-1 when none). `tiles.notNan` must be written. Lanes on VectorE whose every
/// tap reaches the whole lane run chains of scalar_tensor_tensor (no keys to weigh); the
/// others max/min keys weighted on ScalarE. `ring` keys are live at once. The taps are
/// compared last to first; `compared(j)` is called once the compares of tap j are emitted (and
/// a few units more, so that what it emits on ScalarE does not hold up the weights).
void selectTaps(KernelBuilder& builder, const SelectTiles& tiles,
                const std::array<PoolAxis, 3>& axes, const Box& inputs, const Box& out,
                const std::vector<TapBox>& taps, const std::vector<Lane>& lanes, size_t ring,
                const std::function<void(size_t)>& compared);

/// What the engine balance of max backward needs to know about a problem.
struct SelectWork {
  bool bf16 = false;           ///< kernel dtype bf16 (else fp32)
  bool bf16Keys = true;        ///< keys fit bf16
  bool disjoint = true;        ///< windows do not overlap (predicated zeros, not sums)
  bool otInPsum = false;       ///< VectorE compares read output_tensor from PSUM
  bool operandInPsum = false;  ///< the predicated copies read an operand from PSUM
  bool lastInPsum = false;     ///< the last NaN's index is shifted into PSUM
  bool fastPredicate = false;  ///< the first scatter predicate runs on VectorE (performance mode)
};

/// The lanes, among the cuts `splitLanes` makes at 0-100 %, that finish the busiest of VectorE,
/// GpSimd and ScalarE earliest on one work item (outputs `out`, loaded inputs `inputs`, owned
/// inputs `owned`, window taps `taps`), by a cost estimate of every instruction the item emits:
/// the I2 table's element work and `geometry`'s clocks, performance mode, port sharing and
/// fixed cost per instruction (VectorE and ScalarE at least MIN_II, GpSimd its start on top),
/// or the path through a GpSimd lane (its sweeps after the item before's scatter) if longer.
/// `fillWork`: the element work of each halo-fill memset the item's loads put on GpSimd.
std::vector<Lane> balancedLanes(const SelectWork& work, const Box& inputs, const Box& owned,
                                const Box& out, const std::vector<TapBox>& taps,
                                const std::vector<double>& fillWork, const isa::Geometry& geometry);

}  // namespace neuronsim::kernels
