// dw of conv3d: per C_in tile, C_out slab (<= 512) and group of taps, every dy chunk and its x
// window are loaded once; per box of <= P (partitions) dy positions, dy and each tap's strided x
// view are transposed on TensorE (positions onto partitions) and multiplied into the tap's PSUM
// bank.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "isa/error.h"
#include "kernels/builder/pipeline.h"
#include "kernels/conv/conv_bwd_build.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_window.h"

namespace neuronsim::kernels {

namespace {

constexpr int kBuffers = 2;
constexpr int kTransposeRing = 8;  // PSUM transpose outputs (each copied out at once)

int64_t product(const Int3& v) {
  return v[0] * v[1] * v[2];
}

/// Emits dw: passes over (C_in tile, C_out slab, tap group), each streaming every dy chunk.
class DwEmitter {
 public:
  DwEmitter(KernelBuilder& b, const ConvCore& fwd, const DwBoxesPlan& plan, isa::Dtype dtype,
            const HbmView& dy, const HbmView& x, const HbmView& dw)
      : b_(b), fwd_(fwd), plan_(plan), dtype_(dtype), dy_(dy), x_(x), dw_(dw), evict_(b) {}

  void run() {
    allocate();
    const std::vector<Chunk> chunks = chunkList(fwd_, plan_.chunk);
    std::vector<Pass> passes;
    for (int64_t ci0 = 0; ci0 < fwd_.cin; ci0 += plan_.parts)
      for (int64_t co0 = 0; co0 < fwd_.cout; co0 += plan_.coWidth)
        for (int64_t g0 = 0; g0 < fwd_.tapCount(); g0 += plan_.tapGroup)
          passes.push_back({ci0, std::min(plan_.parts, fwd_.cin - ci0), co0,
                            std::min(plan_.coWidth, fwd_.cout - co0), g0,
                            std::min(plan_.tapGroup, fwd_.tapCount() - g0)});
    const size_t steps = passes.size() * chunks.size();
    const int64_t perPass = static_cast<int64_t>(chunks.size());
    auto passOf = [&](int64_t i) -> const Pass& {
      return passes[static_cast<size_t>(i / perPass)];
    };
    auto chunkOf = [&](int64_t i) -> const Chunk& {
      return chunks[static_cast<size_t>(i % perPass)];
    };
    std::vector<bool> started;
    runPipelined(
        static_cast<int64_t>(steps), kBuffers,
        [&](int64_t i, int set) { load(passOf(i), chunkOf(i), set); },
        [&](int64_t i, int set) {
          if (i % perPass == 0) started.assign(static_cast<size_t>(passOf(i).taps), false);
          process(passOf(i), chunkOf(i), set, started);
          if ((i + 1) % perPass == 0) store(passOf(i));
        });
    for (BufferRing* ring : {&windows_, &stages_, &dyTiles_, &xT_, &dyT_, &outs_, &transposed_})
      ring->release(b_);
    for (const Tile& t : acc_) b_.release(t);
  }

 private:
  /// One C_in tile, C_out slab and tap group.
  struct Pass {
    int64_t ci0, cs, co0, cw, g0, taps;
  };

  void allocate() {
    const Int3& w = plan_.window;
    const Int3& c = plan_.chunk;
    const int64_t ciParts = std::min(fwd_.cin, plan_.parts),
                  coParts = std::min(fwd_.cout, plan_.parts);
    if (plan_.perTap) {
      windows_ = BufferRing::sbuf(b_, kBuffers, {ciParts, plan_.tapGroup, w[0], w[1], w[2]}, dtype_,
                                  "x_columns");
    } else {
      windows_ = BufferRing::sbuf(b_, kBuffers, {ciParts, w[0], w[1], w[2]}, dtype_, "x_window");
      stages_ = BufferRing::sbuf(b_, kBuffers, {ciParts, w[0], w[1], w[2]}, dtype_, "x_stage");
    }
    dyTiles_ =
        BufferRing::sbuf(b_, kBuffers, {coParts, plan_.coSub, c[0], c[1], c[2]}, dtype_, "dy");
    dyT_ = BufferRing::sbuf(b_, kBuffers, {plan_.parts, plan_.coWidth}, dtype_, "dyT");
    outs_ = BufferRing::sbuf(b_, kBuffers, {ciParts, plan_.tapGroup, plan_.coWidth}, dw_.dtype(),
                             "dw_out");
    xT_ =
        BufferRing::sbuf(b_, static_cast<int>(plan_.xtRing), {plan_.parts, ciParts}, dtype_, "xT");
    transposed_ = BufferRing::psum(b_, kTransposeRing, {plan_.parts, plan_.parts}, isa::Dtype::Fp32,
                                   "transposed");
    for (int64_t i = 0; i < plan_.tapGroup; ++i)
      acc_.push_back(
          b_.psum({ciParts, plan_.coWidth}, isa::Dtype::Fp32, fmt::format("dw_acc_{}", i)));
  }

  /// Evicts the pass's per-tap accumulators and stores them (triggered from ScalarE).
  void store(const Pass& pass) {
    b_.setNote("dw evict");
    const int32_t cs = static_cast<int32_t>(pass.cs);
    const Tile out = outs_.next().partitionSlice(0, cs).slice(0, 0, pass.taps).slice(1, 0, pass.cw);
    for (int64_t g = 0; g < pass.taps; ++g)
      copy(out.select(0, g), acc_[g].partitionSlice(0, cs).slice(0, 0, pass.cw));
    const HbmView dst = dw_.reshape({fwd_.tapCount(), fwd_.cin, fwd_.cout})
                            .slice(0, pass.g0, pass.g0 + pass.taps)
                            .slice(1, pass.ci0, pass.ci0 + pass.cs)
                            .slice(2, pass.co0, pass.co0 + pass.cw);
    b_.setNote("dw store");
    b_.dmaCopy(dst.permute({1, 0, 2}), out, DmaOptions{-1, isa::Engine::Scalar});
  }

  void load(const Pass& pass, const Chunk& chunk, int slot) {
    b_.setNote("dw load");
    const int32_t cs = static_cast<int32_t>(pass.cs);
    if (plan_.perTap) {
      const Int3& k = fwd_.taps;
      for (int64_t g = 0; g < pass.taps; ++g) {
        const int64_t tap = pass.g0 + g;
        loadTapColumn(b_, fwd_, x_, chunk, pass.ci0,
                      {tap / (k[1] * k[2]), tap / k[2] % k[1], tap % k[2]},
                      windows_[slot].partitionSlice(0, cs).select(0, g));
      }
    } else {
      loadWindow(b_, fwd_, x_, chunk, pass.ci0, windows_[slot].partitionSlice(0, cs),
                 stages_[slot].partitionSlice(0, cs));
    }
    loadChannelChunk(b_, dy_, chunk, pass.co0, pass.cw, dyTiles_[slot]);
  }

  /// The transposed operands of one box: dy^T [positions, co] and x^T [positions, ci] per tap.
  struct Prepared {
    Tile dyT;
    std::vector<Tile> xTs;
  };

  /// Transposes every box of the chunk, one box ahead of its matmuls (so TensorE never waits for
  /// the PSUM -> SBUF copies of the box it multiplies).
  void process(const Pass& pass, const Chunk& chunk, int slot, std::vector<bool>& started) {
    const Int3& bx = plan_.box;
    std::vector<std::pair<Int3, Int3>> boxes;
    for (int64_t d = 0; d < chunk.extent[0]; d += bx[0])
      for (int64_t h = 0; h < chunk.extent[1]; h += bx[1])
        for (int64_t w = 0; w < chunk.extent[2]; w += bx[2])
          boxes.push_back(
              {{d, h, w},
               {std::min(bx[0], chunk.extent[0] - d), std::min(bx[1], chunk.extent[1] - h),
                std::min(bx[2], chunk.extent[2] - w)}});
    Prepared next = prepare(pass, slot, boxes[0].first, boxes[0].second);
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Prepared current = next;
      if (i + 1 < boxes.size()) next = prepare(pass, slot, boxes[i + 1].first, boxes[i + 1].second);
      b_.setNote("dw matmul");
      for (int64_t g = 0; g < pass.taps; ++g) {
        b_.matmul(acc_[g].partitionSlice(0, static_cast<int32_t>(pass.cs)).slice(0, 0, pass.cw),
                  current.xTs[g], current.dyT, started[g]);
        started[g] = true;
      }
    }
  }

  Prepared prepare(const Pass& pass, int slot, const Int3& origin, const Int3& count) {
    b_.setNote("dw transpose");
    const Int3 one{1, 1, 1};
    const int32_t npos = static_cast<int32_t>(product(count));
    Prepared p{dyT_.next().partitionSlice(0, npos).slice(0, 0, pass.cw), {}};
    for (int64_t u = 0; u * plan_.parts < pass.cw; ++u) {
      const int64_t cu = std::min(plan_.parts, pass.cw - u * plan_.parts);
      const Tile src = box(dyTiles_[slot].partitionSlice(0, static_cast<int32_t>(cu)).select(0, u),
                           origin, count, one);
      copy(p.dyT.slice(0, u * plan_.parts, u * plan_.parts + cu), transpose(src, npos, cu));
    }
    const Int3& k = fwd_.taps;
    const Tile window = windows_[slot].partitionSlice(0, static_cast<int32_t>(pass.cs));
    for (int64_t g = 0; g < pass.taps; ++g) {
      const int64_t tap = pass.g0 + g;
      const Int3 kk{tap / (k[1] * k[2]), tap / k[2] % k[1], tap % k[2]};
      Int3 start;
      for (int a = 0; a < 3; ++a) start[a] = origin[a] * fwd_.stride[a] + kk[a] * fwd_.dilation[a];
      p.xTs.push_back(xT_.next().partitionSlice(0, npos).slice(0, 0, pass.cs));
      const Tile src = plan_.perTap ? box(window.select(0, g), origin, count, {1, 1, 1})
                                    : box(window, start, count, fwd_.stride);
      copy(p.xTs.back(), transpose(src, npos, pass.cs));
    }
    return p;
  }

  /// src [cols partitions, rows free] transposed into the PSUM ring: [rows, cols].
  Tile transpose(const Tile& src, int32_t rows, int64_t cols) {
    const Tile dst = transposed_.next().partitionSlice(0, rows).slice(0, 0, cols);
    b_.transpose(dst, src);
    return dst;
  }

  void copy(const Tile& dst, const Tile& src) { evict_(dst, src); }

  KernelBuilder& b_;
  const ConvCore& fwd_;
  const DwBoxesPlan& plan_;
  isa::Dtype dtype_;
  HbmView dy_, x_, dw_;
  PsumEvictor evict_;
  BufferRing windows_, stages_, dyTiles_, xT_, dyT_, outs_, transposed_;
  std::vector<Tile> acc_;
};

}  // namespace

void buildConvDw(KernelBuilder& builder, const ConvCore& forward, const DwBoxesPlan& plan,
                 isa::Dtype dtype, const HbmView& dy, const HbmView& x, const HbmView& dw) {
  DwEmitter(builder, forward, plan, dtype, dy, x, dw).run();
}

}  // namespace neuronsim::kernels
