#pragma once
// Emits the conv3d backward programs: dx (the conv core on dy), dw (position-major GEMMs), db.

#include <memory>
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

class DwRowsEmitter;

/// dw by the Rows method emitted in pieces, so another program (conv3d_bwd's dx) can be emitted
/// between them: the constructor allocates the tiles, prime emits the first loads, emitThrough
/// emits steps (a chunk of one pass each) up to a count, finish emits the rest and releases.
class DwRowsProgram {
 public:
  DwRowsProgram(KernelBuilder& builder, const ConvCore& forward, const DwRowsPlan& plan,
                isa::Dtype dtype, const HbmView& dy, const HbmView& x, const HbmView& dw,
                const std::optional<HbmView>& db = std::nullopt);
  ~DwRowsProgram();
  /// Emits the constant fills and the first step's loads (once; emitThrough and finish call it).
  void prime();
  /// Steps of the whole program.
  int64_t steps() const;
  /// Emits the steps before `end` not emitted yet.
  void emitThrough(int64_t end);
  /// Emits the remaining steps and releases the tiles (once, last).
  void finish();
  /// Releases the tiles of a program that emitted nothing (instead of finish).
  void abandon();

 private:
  std::unique_ptr<DwRowsEmitter> emitter_;
};

/// conv3d_bwd's dw (Rows) emitted between dx's chunks, so TensorE multiplies dw while dx waits
/// for its loads: attach() hooks dx's options (afterChunk; dx_psum_buffers auto 2); when dx has
/// allocated its tiles, dw is planned in the SBUF and PSUM dx leaves and, if that gives a Rows
/// plan, options.dwLead steps are emitted before dx's first chunk and the rest spread evenly
/// after dx's chunks.
class OverlappedDw {
 public:
  OverlappedDw(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype, const HbmView& dy,
               const HbmView& x, const HbmView& dw, const std::optional<HbmView>& db,
               const ConvBwdOptions& options);
  OverlappedDw(const OverlappedDw&) = delete;
  OverlappedDw& operator=(const OverlappedDw&) = delete;
  ~OverlappedDw();
  /// Hooks dx's options (when overlapping is enabled and dw plans as Rows on the whole machine).
  void attach(ConvOptions& dx);
  /// After dx: emits dw's remaining steps; false when dw was not overlapped (emit it after dx).
  bool finish();
  /// db was computed from dw's dyT tiles.
  bool dbDone() const { return program_ && plan_->rows.db; }
  /// The dw plan in use once dx has allocated (nothing before, or when it did not fit as Rows).
  const std::optional<ConvBwdPlan>& plan() const { return plan_; }
  /// dw steps emitted before dx's first chunk (auto: kAutoLead).
  int64_t lead() const;
  /// dw's steps all follow dx's last chunk; only its tiles and first loads come before dx's
  bool tail() const;
  /// SBUF bytes per partition dx allocates after its chunk -1 (the stored filters its loadFilters
  /// transposes on the PE): dw is planned without them.
  int64_t dxTransientBytes() const;
  /// Whether dxTransientBytes() still fit SBUF beside dw's tiles (a probe allocation).
  bool roomForDx();

 private:
  void afterDxChunk(int64_t item, int64_t items);

  KernelBuilder& b_;
  const ConvCore& forward_;
  isa::Dtype dtype_;
  HbmView dy_, x_, dw_;
  std::optional<HbmView> db_;
  ConvBwdOptions options_;
  std::optional<ConvBwdPlan> full_, plan_;  // dw planned on the whole machine; in what dx leaves
  std::optional<ConvPlan> dxPlan_;          // dx's plan with the options attach() set
  std::unique_ptr<DwRowsProgram> program_;
};

/// db [C_out] = sum of dy over batch and positions (Vector reductions, fp32 accumulation).
void buildConvDb(KernelBuilder& builder, const HbmView& dy, const HbmView& db);

}  // namespace neuronsim::kernels
