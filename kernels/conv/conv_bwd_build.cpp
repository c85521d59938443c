// dx through the conv core, and db as per-partition Vector reductions of dy chunks.
#include "kernels/conv/conv_bwd_build.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/size_limits.h"
#include "kernels/builder/pipeline.h"
#include "kernels/conv/conv_build.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kDbChunk = 8192;            // dy elements per partition per load
constexpr int64_t kAutoLead = 0;              // overlapped dw steps before dx's first chunk
constexpr int64_t kOverlapDxPsumBuffers = 2;  // dx's PSUM blocks when dw shares PSUM
// tail: dw's first loads are emitted this share of dx's chunks (rounded, at least one) before
// dx's last, times fp32_matmul_factor when dx's matmuls are fp32: they run beside dx's remaining
// chunks but queue ahead of those chunks' loads, which delays load-bound (bf16) chunks and leaves
// slack-rich (fp32, TensorE-bound) ones alone. Measured best leads of 0..5, bf16: 4 chunks 1,
// 7 chunks 1, 16 chunks 2-3; fp32: 4 chunks 2-3. The fixed 3 before delayed short bf16 dx runs'
// last loads (conv3d_bwd C 32 8x32x32 61.7 -> 55.9 us).
constexpr double kTailPrimeShare = 0.2;
constexpr int64_t kTransientSlack = 256;  // bytes per partition: allocation rounding

}  // namespace

void buildConvDx(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype,
                 const HbmView& dy, const HbmView& filters, const HbmView& dx,
                 const ConvOptions& options) {
  buildConv(builder, dxCore(forward), dtype, dy, filters, std::nullopt, dx, options);
}

namespace {

const std::vector<std::string> kDxKnobs = {"chunk_positions", "w_pairs",     "stationary",
                                           "psum_buffers",    "slot_copies", "slot_copy_engines",
                                           "plane_pairs"};  // as dx_<name>

}  // namespace

ConvOptions dxOptions(const ParamValues& params) {
  return convOptions(params, "dx_", kDxKnobs);
}

std::vector<ParamSpec> dxScheduleParams() {
  return convScheduleParams("dx_", kDxKnobs);
}

namespace {

/// dw overlaps dx when its plan in what dx leaves is the small-channel one (depth-packed,
/// kh taps shared) with the chunks and passes of its plan on the whole machine: elsewhere dw is
/// TensorE-bound on its own PSUM banks and dx not load-bound enough to pay for the split.
bool overlapPays(const DwRowsPlan& full, const ConvBwdPlan& left) {
  if (left.dwMethod != DwMethod::Rows) return false;
  const DwRowsPlan& p = left.rows;
  // row pairs hold 2 more dyT boxes and their accumulators' evictions: beside dx a chunk may
  // load fewer rows
  const bool rows = p.rowPairs && p.chunk[0] == full.chunk[0] && p.chunk[2] == full.chunk[2];
  return p.depthGroup > 1 && p.shareKh && (p.chunk == full.chunk || rows) &&
         p.passes.size() == full.passes.size() && p.depthGroup == full.depthGroup &&
         p.db == full.db;
}

}  // namespace

OverlappedDw::OverlappedDw(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype,
                           const HbmView& dy, const HbmView& x, const HbmView& dw,
                           const std::optional<HbmView>& db, const ConvBwdOptions& options)
    : b_(builder),
      forward_(forward),
      dtype_(dtype),
      dy_(dy),
      x_(x),
      dw_(dw),
      db_(db),
      options_(options) {}

OverlappedDw::~OverlappedDw() = default;

bool OverlappedDw::roomForDx() {
  const int64_t bytes = dxTransientBytes();
  if (bytes == 0) return true;
  try {
    const Tile probe = b_.sbuf({b_.geometry().partitions, isa::ceilDiv(bytes, 4)}, isa::Dtype::Fp32,
                               "dx_room_probe");
    b_.release(probe);
    return true;
  } catch (const Error&) {
    return false;
  }
}

int64_t OverlappedDw::dxTransientBytes() const {
  const ConvCore core = dxCore(forward_);
  if (!dxPlan_ || dxPlan_->pack == 1 || !core.filtersCoCi || !dxPlan_->quadrantGroups) return 0;
  const int64_t rows = core.taps[0] * core.taps[1];
  return (dxPlan_->pack + 1) * rows * dxPlan_->slotParts * isa::dtypeBytes(dtype_) +
         kTransientSlack;
}

bool OverlappedDw::tail() const {
  return options_.dwOverlap != "spread";
}

int64_t OverlappedDw::lead() const {
  return options_.dwLead >= 0 ? options_.dwLead : kAutoLead;
}

void OverlappedDw::attach(ConvOptions& dx) {
  if (options_.dwOverlap == "off") return;
  full_ = planConvBwd(forward_, dtype_, b_.geometry(), options_);
  if (full_->dwMethod != DwMethod::Rows) return;
  if (full_->rows.depthGroup == 1 || !full_->rows.shareKh) return;
  dx.afterChunk = [this](int64_t item, int64_t items) { afterDxChunk(item, items); };
  if (!tail() && dx.psumBuffers == 0) dx.psumBuffers = kOverlapDxPsumBuffers;
  dxPlan_ = planConv(dxCore(forward_), dtype_, b_.geometry(), dx);
  if (tail()) return;
  if (dx.evict == "auto") dx.evict = "scalar";
  options_.dwEvictVectorOnly = true;
  // grouped x windows trade TensorE time for Vector evictions and DMA triggers, which dx shares
  if (options_.dwXGroups == "auto") options_.dwXGroups = "off";
}

void OverlappedDw::afterDxChunk(int64_t item, int64_t items) {
  if (item < 0) {
    // dw gets the PSUM banks and SBUF bytes dx left
    isa::Geometry left = b_.geometry();
    const int64_t bank = left.psumBankBytes();
    if (!tail()) {  // tail: dw takes PSUM once dx is done
      left.psumBanks = static_cast<int32_t>((left.psumPartitionBytes - b_.psumBytesInUse()) / bank);
      if (left.psumBanks < 2) return;  // dw runs after dx on the whole machine
      left.psumPartitionBytes = left.psumBanks * bank;
    }
    left.sbufPartitionBytes = b_.sbufBytesFree();
    try {
      plan_ = planConvBwd(forward_, dtype_, left, options_);
    } catch (const Error&) {
      plan_.reset();  // dw runs after dx on the whole machine
    }
    if (plan_ && !overlapPays(full_->rows, *plan_)) plan_.reset();
    if (!plan_) return;
    program_ =
        std::make_unique<DwRowsProgram>(b_, forward_, plan_->rows, dtype_, dy_, x_, dw_, db_);
    if (!roomForDx()) {  // dw runs after dx on the whole machine
      program_->abandon();
      program_.reset();
      plan_.reset();
      return;
    }
    if (tail()) return;
    program_->prime();
    program_->emitThrough(lead());
    return;
  }
  if (!program_) return;
  if (tail()) {
    const double factor = dtype_ == isa::Dtype::Fp32 ? b_.geometry().fp32MatmulFactor : 1.0;
    const auto lead =
        std::max<int64_t>(1, std::llround(static_cast<double>(items) * kTailPrimeShare * factor));
    if (item == std::max<int64_t>(0, items - 1 - lead)) program_->prime();
    return;
  }
  const int64_t steps = program_->steps(), first = std::min(lead(), steps);
  program_->emitThrough(first + isa::ceilDiv((item + 1) * (steps - first), items));
}

bool OverlappedDw::finish() {
  if (!program_) return false;
  program_->finish();
  return true;
}

void buildConvDb(KernelBuilder& b, const HbmView& dy, const HbmView& db) {
  const int64_t batch = dy.size(0), channels = dy.size(1);
  const int64_t positions = dy.size(2) * dy.size(3) * dy.size(4);
  const int64_t chunk = std::min(positions, kDbChunk);
  const int64_t partitions = b.geometry().partitions;
  const int64_t tiles = isa::ceilDiv(channels, partitions);
  const int64_t parts = std::min(channels, partitions);
  BufferRing ring = BufferRing::sbuf(b, 2, {parts, chunk}, dy.dtype(), "db_in");
  const Tile acc = b.sbuf({parts, tiles}, isa::Dtype::Fp32, "db_acc");
  const Tile part = b.sbuf({parts, 1}, isa::Dtype::Fp32, "db_part");
  for (int64_t j = 0; j < tiles; ++j) {
    const int64_t c0 = j * partitions, cw = std::min(partitions, channels - c0);
    const int32_t p = static_cast<int32_t>(cw);
    const Tile sum = acc.partitionSlice(0, p).slice(0, j, j + 1);
    bool first = true;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
        const int64_t count = std::min(chunk, positions - p0);
        const Tile in = ring.next().partitionSlice(0, p).slice(0, 0, count);
        b.setNote("db load dy");
        b.dmaCopy(in, dy.select(0, n).slice(0, c0, c0 + cw).merge(1, 3).slice(1, p0, p0 + count));
        b.setNote("db reduce");
        b.tensorReduce(first ? sum : part.partitionSlice(0, p), in, isa::AluOp::Add);
        if (!first) b.tensorTensor(sum, sum, part.partitionSlice(0, p), isa::AluOp::Add);
        first = false;
      }
    b.setNote("db store");
    b.dmaCopy(db.slice(0, c0, c0 + cw).reshape({cw, 1}), sum);
  }
  ring.release(b);
  b.release(acc);
  b.release(part);
}

}  // namespace neuronsim::kernels
