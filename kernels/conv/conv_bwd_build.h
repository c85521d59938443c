#pragma once
// Emits the conv3d backward programs: dx (the conv core on dy), dw (position-major GEMMs), db.

#include <optional>

#include "kernels/builder/kernel_builder.h"
#include "kernels/conv/conv_bwd_plan.h"
#include "kernels/conv/conv_core.h"
#include "kernels/conv/conv_plan.h"

namespace neuronsim::kernels {

/// dx [B, C_in, D, H, W] of the forward conv `forward` from dy: the conv core of dxCore(forward)
/// with the schedule `options`.
void buildConvDx(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype,
                 const HbmView& dy, const HbmView& filters, const HbmView& dx,
                 const ConvOptions& options = {});

/// The conv core options of conv3d_bwd's dx_* parameters.
ConvOptions dxOptions(const ParamValues& params);
/// Those parameters, for conv3d_bwd's registry entry.
std::vector<ParamSpec> dxScheduleParams();

/// dw [Kd, Kh, Kw, C_in, C_out][t, ci, co] = sum over batch and dy positions o of
/// x_virtual[ci, o*stride + t*dilation] * dy[co, o]. x and dy tiles are transposed on TensorE to
/// put positions on partitions; each tap accumulates in its own PSUM bank (DwMethod::Boxes).
void buildConvDw(KernelBuilder& builder, const ConvCore& forward, const DwBoxesPlan& plan,
                 isa::Dtype dtype, const HbmView& dy, const HbmView& x, const HbmView& dw);

/// dw by the Rows method of `plan` (see DwMethod::Rows), and db [C_out] from the same dyT tiles
/// when `plan.db` (then `db` must be given).
void buildConvDwRows(KernelBuilder& builder, const ConvCore& forward, const DwRowsPlan& plan,
                     isa::Dtype dtype, const HbmView& dy, const HbmView& x, const HbmView& dw,
                     const std::optional<HbmView>& db = std::nullopt);

/// db [C_out] = sum of dy over batch and positions (Vector reductions, fp32 accumulation).
void buildConvDb(KernelBuilder& builder, const HbmView& dy, const HbmView& db);

}  // namespace neuronsim::kernels
