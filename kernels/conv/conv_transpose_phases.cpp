// Transposed conv with kernel = stride as phase matmuls: x as it lies, Kd phases stacked on
// the PE columns, outputs evicted into their phase positions and stored per phase group.

#include "kernels/conv/conv_transpose_phases.h"

#include <algorithm>
#include <vector>

#include "isa/size_limits.h"
#include "kernels/builder/pipeline.h"

namespace neuronsim::kernels {

namespace {

constexpr int kBuffers = 3;     // input blocks in flight (load of the next two behind compute)
constexpr int kOutBuffers = 4;  // out tiles: a block's evictions need not wait for older stores
constexpr int32_t kFilterQueue = 14;  // the filters' queue (fed by ScalarE; stores use 8-13)

/// Input positions [d0, d0 + nd) x [h0, h0 + nh) x all W of batch `b`: one matmul's moving.
struct PhaseBlock {
  int64_t b, d0, nd, h0, nh;
};

class PhaseEmitter {
 public:
  PhaseEmitter(KernelBuilder& b, const ConvCore& core, const ConvOptions& options, isa::Dtype dtype,
               const HbmView& x, const HbmView& filters, const std::optional<HbmView>& bias,
               const HbmView& out)
      : b_(b),
        core_(core),
        options_(options),
        dtype_(dtype),
        x_(x),
        filters_(filters),
        bias_(bias),
        out_(out),
        parts_(b.geometry().peTile()),
        evictEngines_(evictEngines(options.evict)) {
    const int64_t coWidth = std::min(core_.cout, parts_);
    for (int64_t g = 1; g <= core_.taps[0]; ++g)
      if (core_.taps[0] % g == 0 && g * coWidth <= parts_) stack_ = g;
  }

  void run() {
    const Int3& k = core_.taps;
    const std::vector<PhaseBlock> blocks = blockList();
    const int64_t nd = blocks.front().nd, nh = blocks.front().nh, w = core_.in[2];
    const int64_t ciTiles = isa::ceilDiv(core_.cin, parts_);
    weights_ = b_.sbuf({std::min(core_.cin, parts_), ciTiles, k[1], k[2], k[0], core_.cout}, dtype_,
                       "filters");
    windows_ = BufferRing::sbuf(b_, kBuffers, {std::min(core_.cin, parts_), ciTiles, nd, nh, w},
                                dtype_, "x_block");
    outs_ = BufferRing::sbuf(b_, kOutBuffers, {parts_, nd, k[0] / stack_, nh * k[1], w * k[2]},
                             out_.dtype(), "out");
    const int psumBuffers = options_.psumBuffers > 0 ? static_cast<int>(options_.psumBuffers) : 4;
    psums_ = BufferRing::psum(b_, psumBuffers, {parts_, nd * nh * w}, isa::Dtype::Fp32, "acc");
    runPipelined(
        static_cast<int64_t>(blocks.size()), kBuffers,
        [&](int64_t item, int set) {
          if (item == 0) loadFilters();
          loadBlock(blocks[static_cast<size_t>(item)], set);
        },
        [&](int64_t item, int set) { computeBlock(blocks[static_cast<size_t>(item)], set); });
    b_.release(weights_);
    if (bias_) b_.release(biasTile_);
    for (BufferRing* ring : {&windows_, &outs_, &psums_}) ring->release(b_);
  }

 private:
  static EngineCycle evictEngines(const std::string& choice) {
    if (choice == "vector") return EngineCycle({isa::Engine::Vector});
    if (choice == "scalar") return EngineCycle({isa::Engine::Scalar});
    return EngineCycle({isa::Engine::Vector, isa::Engine::Scalar});
  }

  /// Blocks of at most one matmul's moving positions (and the chunk_positions preference, in
  /// output positions): whole planes when a plane fits, else rows of one plane.
  std::vector<PhaseBlock> blockList() const {
    const Int3& in = core_.in;
    int64_t most = b_.geometry().matmulFreeFp32();
    const int64_t phases = core_.tapCount();
    if (options_.chunkPositions > 0)
      most = std::clamp<int64_t>(options_.chunkPositions / phases, in[2], most);
    const int64_t nh = std::min(in[1], std::max<int64_t>(1, most / in[2]));
    const int64_t nd =
        nh == in[1] ? std::min(in[0], std::max<int64_t>(1, most / (in[1] * in[2]))) : 1;
    std::vector<PhaseBlock> blocks;
    for (int64_t b = 0; b < core_.batch; ++b)
      for (int64_t d = 0; d < in[0]; d += nd)
        for (int64_t h = 0; h < in[1]; h += nh)
          blocks.push_back({b, d, std::min(nd, in[0] - d), h, std::min(nh, in[1] - h)});
    return blocks;
  }

  int64_t ciCount(int64_t t) const { return std::min(parts_, core_.cin - t * parts_); }

  /// Stored tap of output phase r along `axis` (and the phase of stored tap r): the core's tap
  /// t = K-1-r reads stored tap t, or K-1-t when taps are flipped.
  int64_t storedOf(int axis, int64_t r) const {
    return core_.flipTaps ? r : core_.taps[axis] - 1 - r;
  }

  /// Filters as [ci, C_in tile, kh, kw, kd, co] (stored taps): a group of `stack_` kd taps
  /// are adjacent columns of one stationary. One DMA per C_in tile, triggered from ScalarE so
  /// it overlaps the first x load's trigger on Sync.
  void loadFilters() {
    b_.setNote("load filters");
    for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
      const int64_t ci0 = t * parts_, cs = ciCount(t);
      b_.dmaCopy(
          weights_.partitionSlice(0, static_cast<int32_t>(cs)).select(0, t).permute({2, 0, 1, 3}),
          filters_.slice(3, ci0, ci0 + cs).permute({3, 0, 1, 2, 4}),
          DmaOptions{kFilterQueue, isa::Engine::Scalar});
    }
    if (!bias_) return;
    const int64_t coTiles = isa::ceilDiv(core_.cout, parts_);
    biasTile_ = b_.sbuf({parts_, coTiles}, isa::Dtype::Fp32, "bias");
    for (int64_t j = 0; j < coTiles; ++j) {
      const int64_t co0 = j * parts_, cw = std::min(parts_, core_.cout - co0);
      for (int64_t g = 0; g < stack_; ++g)
        b_.dmaCopy(biasTile_.partitionSlice(static_cast<int32_t>(g * cw), static_cast<int32_t>(cw))
                       .slice(0, j, j + 1),
                   bias_->slice(0, co0, co0 + cw).reshape({cw, 1}));
    }
  }

  void loadBlock(const PhaseBlock& blk, int set) {
    b_.setNote("load x");
    for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
      const int64_t ci0 = t * parts_, cs = ciCount(t);
      const Tile dst = windows_[set]
                           .partitionSlice(0, static_cast<int32_t>(cs))
                           .select(0, t)
                           .slice(0, 0, blk.nd)
                           .slice(1, 0, blk.nh);
      b_.dmaCopy(dst,
                 x_.select(0, blk.b)
                     .slice(0, ci0, ci0 + cs)
                     .slice(1, blk.d0, blk.d0 + blk.nd)
                     .slice(2, blk.h0, blk.h0 + blk.nh),
                 DmaOptions{-1, isa::Engine::Sync});
    }
  }

  void computeBlock(const PhaseBlock& blk, int set) {
    const Int3& k = core_.taps;
    const int64_t w = core_.in[2], n = blk.nd * blk.nh * w;
    for (int64_t co0 = 0; co0 < core_.cout; co0 += parts_) {
      const int64_t cw = std::min(parts_, core_.cout - co0);
      const int32_t rows = static_cast<int32_t>(stack_ * cw);
      // The phases of one depth plane interleave element by element, so one engine evicts a
      // plane (two engines would wait on each other's writes); with both engines, a block's
      // first half of planes goes to VectorE and the rest to ScalarE, else blocks alternate.
      const isa::Engine engine = evictEngines_.next();
      const int64_t split = options_.evict == "auto" ? blk.nd / 2 : 0;
      const Tile outTile =
          outs_.next().partitionSlice(0, rows).slice(0, 0, blk.nd).slice(2, 0, blk.nh * k[1]);
      for (int64_t q = 0; q < k[0] / stack_; ++q)
        for (int64_t rh = 0; rh < k[1]; ++rh)
          for (int64_t rw = 0; rw < k[2]; ++rw) {
            const Tile ps = psums_.next().partitionSlice(0, rows).slice(0, 0, n);
            b_.setNote("matmul");
            for (int64_t t = 0; t * parts_ < core_.cin; ++t) {
              const int32_t cs = static_cast<int32_t>(ciCount(t));
              const Tile taps = weights_.partitionSlice(0, cs)
                                    .select(0, t)
                                    .select(0, storedOf(1, rh))
                                    .select(0, storedOf(2, rw))
                                    .slice(0, q * stack_, (q + 1) * stack_)
                                    .slice(1, co0, co0 + cw);
              const Tile stationary = stack_ == 1 ? taps.select(0, 0) : taps.merge(0, 1);
              const Tile moving = windows_[set]
                                      .partitionSlice(0, cs)
                                      .select(0, t)
                                      .slice(0, 0, blk.nd)
                                      .slice(1, 0, blk.nh)
                                      .reshape({n});
              b_.matmul(ps, stationary, moving, t > 0);
            }
            const Tile dst =
                outTile.select(1, q).slice(1, rh, blk.nh * k[1], k[1]).slice(2, rw, w * k[2], k[2]);
            const Tile result = ps.reshape({blk.nd, blk.nh, w});
            if (split > 0) {
              evict(dst.slice(0, 0, split), result.slice(0, 0, split), co0 / parts_, cw,
                    isa::Engine::Vector);
              evict(dst.slice(0, split, blk.nd), result.slice(0, split, blk.nd), co0 / parts_, cw,
                    isa::Engine::Scalar);
            } else {
              evict(dst, result, co0 / parts_, cw, engine);
            }
          }
      store(blk, outTile, co0, cw);
    }
  }

  void evict(const Tile& dst, const Tile& ps, int64_t coTile, int64_t cw, isa::Engine engine) {
    b_.setNote("evict psum");
    std::optional<Tile> bias;
    if (bias_)
      bias = biasTile_.partitionSlice(0, static_cast<int32_t>(stack_ * cw))
                 .slice(0, coTile, coTile + 1);
    if (engine == isa::Engine::Vector && core_.act == isa::ActFn::Copy) {
      if (bias) return b_.tensorScalar(dst, ps, isa::AluOp::Add, *bias);
      return b_.tensorCopy(dst, ps, isa::Engine::Vector);
    }
    b_.activation(dst, ps, core_.act, 1.0f, bias);
  }

  /// One DMA per kd tap: partition group g of tap group q holds stored kd q*stack + g, the
  /// output depths s*i + its phase. Triggered from GpSimd (idle here): on ScalarE the triggers
  /// held back its evictions.
  void store(const PhaseBlock& blk, const Tile& outTile, int64_t co0, int64_t cw) {
    b_.setNote("store out");
    const Int3& k = core_.taps;
    const HbmView depths = out_.select(0, blk.b)
                               .slice(0, co0, co0 + cw)
                               .split(1, {core_.in[0], k[0]})
                               .slice(1, blk.d0, blk.d0 + blk.nd)
                               .slice(3, blk.h0 * k[1], (blk.h0 + blk.nh) * k[1]);
    for (int64_t q = 0; q < k[0] / stack_; ++q)
      for (int64_t g = 0; g < stack_; ++g)
        b_.dmaCopy(depths.select(2, storedOf(0, q * stack_ + g)),
                   outTile.partitionSlice(static_cast<int32_t>(g * cw), static_cast<int32_t>(cw))
                       .select(1, q),
                   DmaOptions{storeQueues_.next(), isa::Engine::GpSimd});
  }

  KernelBuilder& b_;
  const ConvCore& core_;
  ConvOptions options_;
  isa::Dtype dtype_;
  HbmView x_, filters_;
  std::optional<HbmView> bias_;
  HbmView out_;
  int64_t parts_;
  int64_t stack_ = 1;  ///< Kd phases side by side on the PE columns
  EngineCycle evictEngines_;
  QueueCycle storeQueues_ = QueueCycle::span(8, 6);  ///< a queue holds 2 transfers in flight
  Tile weights_, biasTile_;
  BufferRing windows_, outs_, psums_;
};

}  // namespace

bool transposePhasesApply(const ConvCore& core, const isa::Geometry& geometry) {
  if (core.filtersCoCi || core.in[2] > geometry.matmulFreeFp32()) return false;
  for (int a = 0; a < 3; ++a) {
    if (core.stride[a] != 1 || core.dilation[a] != 1 || core.inputDilation[a] != core.taps[a] ||
        core.padLo[a] != core.taps[a] - 1 || core.out[a] != core.in[a] * core.taps[a])
      return false;
  }
  return core.tapCount() > 1;
}

void buildConvTransposePhases(KernelBuilder& builder, const ConvCore& core, isa::Dtype dtype,
                              const HbmView& x, const HbmView& filters,
                              const std::optional<HbmView>& bias, const HbmView& out,
                              const ConvOptions& options) {
  PhaseEmitter(builder, core, options, dtype, x, filters, bias, out).run();
}

}  // namespace neuronsim::kernels
