#pragma once
// Moving spatial boxes of (batch, channel) planes between HBM and SBUF, and the work loop.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/builder/kernel_builder.h"
#include "kernels/builder/pipeline.h"
#include "kernels/pooling/pooling_axis.h"
#include "kernels/pooling/pooling_config.h"

namespace neuronsim::kernels {

/// A spatial box: one range per axis (D, H, W).
using Box = std::array<Range, 3>;

/// Elements of a box.
int64_t boxElements(const Box& box);
/// True when some axis of the box is empty.
bool boxEmpty(const Box& box);

/// Rows [first, first+count) of the flattened (batch, channel) planes, row = b*C + c.
struct RowTile {
  int64_t first = 0;
  int32_t count = 0;
};

/// Tiles of at most `partitions` rows covering `planes` rows.
std::vector<RowTile> rowTiles(int64_t planes, int32_t partitions);
/// Rows of one tile: every partition, or at most the PE array's rows when the tile is stored
/// NDHWC (TensorE transposes it, contraction = rows), and no more than `planes`.
int32_t rowPartitions(const isa::Geometry& geometry, PoolLayout stored, int64_t planes);

/// How one tensor's D and H are cut into halo slabs (see HaloSlabs): row r is slab
/// (jd, jh) of plane r / (slabsD * slabsH), r % (slabsD * slabsH) = jh * slabsD + jd; box index
/// v of slab j along an axis is global index v - origin + j * step; global indices below 0
/// load `fillBefore`, those at or above `extent` load `fillAfter`.
struct HaloMap {
  struct Axis {
    int64_t slabs = 1;
    int64_t origin = 0;
    int64_t step = 1;
    int64_t extent = 0;
  };
  bool active = false;
  std::array<Axis, 2> axes;  ///< D, H
  float fillBefore = 0.0f;
  float fillAfter = 0.0f;
};
/// The map of `config`'s halo slabs for the input side (forward input, grad_input).
HaloMap inputHalo(const PoolingConfig& config, float fillBefore = 0.0f, float fillAfter = 0.0f);
/// The map for the output side (forward output, grad_output, output_tensor).
HaloMap outputHalo(const PoolingConfig& config);

/// A 5-D pooling tensor in HBM, addressed by (row, box) whatever its layout.
class PlaneTensor {
 public:
  /// `view` is the whole tensor in `layout`, `channels` its C: 5-D, or the 6-D slab view of
  /// slabView ([B, C, S, D, H, W] NCDHW or [B, S, D, H, W, C] NDHWC: S sub-planes per
  /// (b, c) in NCDHW, per batch in NDHWC, not evenly spaced from the one before).
  /// With `halo` (NCDHW only) `view` is the whole 5-D tensor and rows are halo slabs.
  PlaneTensor(const HbmView& view, PoolLayout layout, int64_t channels, HaloMap halo = {});

  /// Loads are triggered from the Sync sequencer, stores from ScalarE's (hwdge, reference
  /// 1.4), so a store waiting for its data never holds back the next prefetch.
  static constexpr isa::Engine kLoadIssuer = isa::Engine::Sync;
  static constexpr isa::Engine kStoreIssuer = isa::Engine::Scalar;

  /// DMAs rows x box of the tensor into `tile` ([rows.count, box extents] view), one transfer
  /// per batch segment of the rows, on queues taken from `queues`. NDHWC loads are DMA
  /// transposes of contiguous channel rows (one per run of contiguous positions).
  void load(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
            const std::function<int32_t()>& queues) const;
  /// A halo load's GpSimd memset: `range` of box axis `axis` (the rest of the box whole).
  struct Fill {
    int axis;
    Range range;
    float value;
  };
  /// The memsets a load of `box` starts with (halo slabs reaching outside the tensor), in order.
  std::vector<Fill> haloFills(const Box& box) const;
  /// The reverse of load; NDHWC goes through TensorE transposes (see storeTransposed).
  void store(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
             const std::function<int32_t()>& queues) const;

 private:
  void transfer(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile, bool toHbm,
                const std::function<int32_t()>& queues) const;
  /// NDHWC load of one batch segment `segment` ([c, D, H, W]): DMA transposes of [positions,
  /// c] runs (contiguous rows of c in HBM) into the [c, box] tile `part`.
  void loadTransposed(KernelBuilder& builder, const HbmView& segment, const Box& box,
                      const Tile& part, const std::function<int32_t()>& queues) const;
  /// NDHWC store: TensorE transposes 128 positions at a time into a PSUM bank ([positions,
  /// rows]); each batch segment then moves its channel columns to HBM in one DMA per bank.
  void storeTransposed(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                       const std::function<int32_t()>& queues) const;
  /// A run of box positions contiguous in an NDHWC tensor: `length` positions starting at
  /// box-flat index `flat`; d (and h) fixed unless -1.
  struct Run {
    int64_t flat, length, d, h;
  };
  std::vector<Run> runs(const Box& box) const;
  /// [run positions, c] view of `segment` ([c, D, H, W]).
  HbmView runView(const HbmView& segment, const Box& box, const Run& run) const;
  /// NDHWC: batch `b`'s [C, D, H, W].
  HbmView batchView(int64_t b) const;
  /// transfer with halo slabs: the fill values where a slab's rows lie outside the tensor, then one
  /// DMA per plane for the slabs whose whole box is inside and one per edge slab.
  void transferHalo(KernelBuilder& builder, RowTile rows, const Box& box, const Tile& tile,
                    bool toHbm, const std::function<int32_t()>& queues) const;
  HaloMap halo_;
  mutable BufferRing psum_;  ///< two PSUM banks, allocated at the first NDHWC store
  /// NCDHW [planes / S, S, D, H, W]; NDHWC [batches / S, S, C, D, H, W]: plane or batch
  /// number = outer * S + sub.
  HbmView canonical_;
  PoolLayout layout_;
  int64_t channels_;
};

/// A flat SBUF buffer [partitions, elements] seen as a [rows, e0, e1, e2] box.
Tile boxTile(const Tile& flat, int32_t rows, const Box& box);

/// The same elements in the same walk order with size-1 axes dropped and contiguous
/// neighbours merged (while counts fit an access pattern), so steps stay small.
Tile compactView(Tile view);

}  // namespace neuronsim::kernels
