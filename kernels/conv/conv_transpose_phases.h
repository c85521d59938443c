#pragma once
// conv3d_transpose whose kernel equals its stride, without padding: every output takes exactly
// one tap per axis, so the kernel is one matmul per output phase over the same input.

#include <optional>
#include <string>
#include <vector>

#include "kernels/builder/kernel_builder.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/registry.h"

namespace neuronsim::kernels {

/// Schedule choices of the phase path (conv3d_transpose parameters; 0: auto).
struct PhaseOptions {
  /// output positions of a batch's first store group (auto: half an input plane's outputs)
  int64_t firstStorePositions = 0;
  int64_t xLoads = 0;  ///< x loads per batch of 1, 2, 4.. planes (auto: 1 KiB/partition, halves)
  std::string storeRamp =
      "auto";  ///< auto | grow | flat | bands: store groups after the first plane
  std::string outLayout = "auto";  ///< auto | phases | slabs (conv_transpose_slabs.h)
};

/// Input positions [d0, d0 + nd) x [h0, h0 + nh) x all W of batch `b`: whole planes, or rows
/// of one plane.
struct PhaseSpan {
  int64_t b = 0, d0 = 0, nd = 1, h0 = 0, nh = 1;
};

/// The phase path's tiling: matmul blocks in order, and the blocks each x load and each store
/// covers (consecutive, [first, last)).
struct PhasePlan {
  struct Group {
    PhaseSpan span;
    int64_t first = 0, last = 0;
  };
  std::vector<PhaseSpan> blocks;
  std::vector<Group> loads, stores;
  bool bands = false;  ///< store_ramp bands (chosen or auto): the first x load is one plane
  /// out_layout slabs (chosen or auto): depth splits per output channel (slabSplits); the
  /// blocks' and stores' planes count within a split (D / splits), the loads' the input's.
  /// 0: the phase layout.
  int64_t splits = 0;
};

/// True when `core` is a transposed conv with kernel = stride on every axis, dilation 1, no
/// padding and no output padding, C_in-major filters and W within one matmul block.
bool transposePhasesApply(const ConvCore& core, const isa::Geometry& geometry);

/// The phase path's parameters (first_store_positions, x_loads, store_ramp, out_layout) and
/// their values.
std::vector<ParamSpec> phaseScheduleParams();
PhaseOptions phaseOptions(const ParamValues& params);

/// The tiling buildConvTransposePhases emits (transposePhasesApply holds): when a plane fits a
/// matmul, stores ramp up (a small first group, then each as large as all before it, up to
/// 16 KiB per partition) and x comes in few loads (phaseOptions' x_loads); else every block of
/// rows is its own load and store. Slabs: per batch one x load, one store and blocks of whole
/// split planes (or rows of one).
PhasePlan planPhases(const ConvCore& core, isa::Dtype dtype, const isa::Geometry& geometry,
                     const ConvOptions& options, const PhaseOptions& phase);

/// Emits `core` (transposePhasesApply holds) as phase matmuls: x is loaded as it lies (no
/// zero-inserted window), the filters of Kd phases sit side by side on the PE columns when
/// C_out fits (C_out 64: two D phases per matmul, all 128 output partitions), and each
/// block's outputs are evicted into their phase positions and stored per phase group.
/// `options`: psum_buffers, evict_engine and chunk_positions (output positions per block).
void buildConvTransposePhases(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype,
                              const HbmView& x, const HbmView& filters,
                              const std::optional<HbmView>& bias, const HbmView& out,
                              const ConvOptions& options, const PhaseOptions& phase = {});

}  // namespace neuronsim::kernels
