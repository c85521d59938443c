// dw of conv3d: per C_in tile, C_out slab (<= 512) and group of taps, every dy chunk and its x
// window are loaded once; per box of <= 128 dy positions, dy and each tap's strided x view are
// transposed on TensorE (positions onto partitions) and multiplied into the tap's PSUM bank.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "isa/error.h"
#include "kernels/conv/conv_bwd_build.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_window.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kPart = 128;
constexpr int64_t kMaxCo = 512;   // moving free size of one matmul
constexpr int64_t kTapGroup = 6;  // taps accumulating at once (one PSUM bank each)
constexpr int kBuffers = 2;
constexpr int kTransposeRing = 8;           // PSUM transpose outputs (each copied out at once)
constexpr int64_t kXtRing = 2 * kTapGroup;  // x^T tiles of the box being multiplied and the next
constexpr int64_t kReserveBytes = 1024;
constexpr int64_t kWindowCap = 48 * 1024;
constexpr int64_t kChunkCap = 1024;

int64_t product(const Int3& v) {
  return v[0] * v[1] * v[2];
}
int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// The dw tiling: C_out slab, dy chunk with its x window, and the transposed box.
struct DwPlan {
  int64_t coWidth = 1;  // C_out columns per pass
  int64_t coSub = 1;    // 128-channel pieces of coWidth
  Int3 chunk{1, 1, 1};  // dy extent per load
  Int3 window{1, 1, 1};
  Int3 box{1, 1, 1};    // dy positions per transpose (<= 128)
  bool perTap = false;  // no x window fits: per-tap im2col columns of the chunk (window = chunk)
};

DwPlan planDw(const ConvCore& fwd, isa::Dtype dtype, const isa::Geometry& geometry) {
  DwPlan plan;
  const int64_t e = isa::dtypeBytes(dtype);
  plan.coWidth = std::min(fwd.cout, kMaxCo);
  plan.coSub = ceilDiv(plan.coWidth, kPart);
  const int64_t fixed = (kXtRing * kPart + 2 * kMaxCo + 2 * kTapGroup * kMaxCo) * e + kReserveBytes;
  const int64_t available = geometry.sbufPartitionBytes - fixed;
  auto windowOf = [&](const Int3& c) {
    return Int3{windowExtent(fwd, 0, c[0]), windowExtent(fwd, 1, c[1]), windowExtent(fwd, 2, c[2])};
  };
  auto fits = [&](const Int3& c, bool preferred) {
    const Int3 w = windowOf(c);
    if (!stepsFit(w) || !stepsFit(c)) return false;
    const int64_t windowBytes = product(w) * e;
    if (2 * (2 * windowBytes + plan.coSub * product(c) * e) > available)
      return false;  // window + staging
    return !preferred || (windowBytes <= kWindowCap && product(c) <= kChunkCap);
  };
  std::optional<Int3> chunk = largestChunk(fwd.out, [&](const Int3& c) { return fits(c, true); });
  if (!chunk) chunk = largestChunk(fwd.out, [&](const Int3& c) { return fits(c, false); });
  if (chunk) {
    plan.chunk = *chunk;
    plan.window = windowOf(plan.chunk);
    plan.box = blockFor(fwd, plan.chunk, plan.window, kPart);
    return plan;
  }
  auto columnsFit = [&](const Int3& c) {
    return stepsFit(c) && 2 * (kTapGroup + plan.coSub) * product(c) * e <= available;
  };
  chunk = largestChunk(fwd.out, columnsFit);
  if (!chunk) throw Error(fwd.kernel + ": the x columns of one dy position do not fit SBUF");
  plan.perTap = true;
  plan.chunk = *chunk;
  plan.window = *chunk;
  ConvCore unit = fwd;
  unit.stride = {1, 1, 1};
  plan.box = blockFor(unit, plan.chunk, plan.window, kPart);
  return plan;
}

/// Emits dw: passes over (C_in tile, C_out slab, tap group), each streaming every dy chunk.
class DwEmitter {
 public:
  DwEmitter(KernelBuilder& b, const ConvCore& fwd, isa::Dtype dtype, const HbmView& dy,
            const HbmView& x, const HbmView& dw)
      : b_(b),
        fwd_(fwd),
        plan_(planDw(fwd, dtype, b.geometry())),
        dtype_(dtype),
        dy_(dy),
        x_(x),
        dw_(dw) {}

  void run() {
    allocate();
    const std::vector<Chunk> chunks = chunkList(fwd_, plan_.chunk);
    std::vector<Pass> passes;
    for (int64_t ci0 = 0; ci0 < fwd_.cin; ci0 += kPart)
      for (int64_t co0 = 0; co0 < fwd_.cout; co0 += plan_.coWidth)
        for (int64_t g0 = 0; g0 < fwd_.tapCount(); g0 += kTapGroup)
          passes.push_back({ci0, std::min(kPart, fwd_.cin - ci0), co0,
                            std::min(plan_.coWidth, fwd_.cout - co0), g0,
                            std::min(kTapGroup, fwd_.tapCount() - g0)});
    const size_t steps = passes.size() * chunks.size();
    auto passOf = [&](size_t i) -> const Pass& { return passes[i / chunks.size()]; };
    auto chunkOf = [&](size_t i) -> const Chunk& { return chunks[i % chunks.size()]; };
    std::vector<bool> started;
    load(passOf(0), chunkOf(0), 0);
    for (size_t i = 0; i < steps; ++i) {
      if (i % chunks.size() == 0) started.assign(static_cast<size_t>(passOf(i).taps), false);
      if (i + 1 < steps) load(passOf(i + 1), chunkOf(i + 1), static_cast<int>((i + 1) % kBuffers));
      process(passOf(i), chunkOf(i), static_cast<int>(i % kBuffers), started);
      if ((i + 1) % chunks.size() == 0) store(passOf(i));
    }
    for (const std::vector<Tile>* tiles :
         {&windows_, &stages_, &dyTiles_, &xT_, &dyT_, &outs_, &acc_, &transposed_})
      for (const Tile& t : *tiles) b_.release(t);
  }

 private:
  /// One C_in tile, C_out slab and tap group.
  struct Pass {
    int64_t ci0, cs, co0, cw, g0, taps;
  };

  void allocate() {
    const Int3& w = plan_.window;
    const Int3& c = plan_.chunk;
    const int64_t ciParts = std::min(fwd_.cin, kPart), coParts = std::min(fwd_.cout, kPart);
    for (int i = 0; i < kBuffers; ++i) {
      const std::string n = std::to_string(i);
      if (plan_.perTap) {
        windows_.push_back(
            b_.sbuf({ciParts, kTapGroup, w[0], w[1], w[2]}, dtype_, "x_columns_" + n));
      } else {
        windows_.push_back(b_.sbuf({ciParts, w[0], w[1], w[2]}, dtype_, "x_window_" + n));
        stages_.push_back(b_.sbuf({ciParts, w[0], w[1], w[2]}, dtype_, "x_stage_" + n));
      }
      dyTiles_.push_back(b_.sbuf({coParts, plan_.coSub, c[0], c[1], c[2]}, dtype_, "dy_" + n));
      dyT_.push_back(b_.sbuf({kPart, plan_.coWidth}, dtype_, "dyT_" + n));
      outs_.push_back(b_.sbuf({ciParts, kTapGroup, plan_.coWidth}, dw_.dtype(), "dw_out_" + n));
    }
    for (int64_t i = 0; i < kXtRing; ++i)
      xT_.push_back(b_.sbuf({kPart, ciParts}, dtype_, "xT_" + std::to_string(i)));
    for (int i = 0; i < kTransposeRing; ++i)
      transposed_.push_back(
          b_.psum({kPart, kPart}, isa::Dtype::Fp32, "transposed_" + std::to_string(i)));
    for (int64_t i = 0; i < kTapGroup; ++i)
      acc_.push_back(
          b_.psum({ciParts, plan_.coWidth}, isa::Dtype::Fp32, "dw_acc_" + std::to_string(i)));
  }

  /// Evicts the pass's per-tap accumulators and stores them (triggered from ScalarE).
  void store(const Pass& pass) {
    b_.setNote("dw evict");
    const int32_t cs = static_cast<int32_t>(pass.cs);
    const Tile out = outs_[outCount_++ % kBuffers]
                         .partitionSlice(0, cs)
                         .slice(0, 0, pass.taps)
                         .slice(1, 0, pass.cw);
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
    const Int3 zero{0, 0, 0}, one{1, 1, 1};
    for (int64_t u = 0; u * kPart < pass.cw; ++u) {
      const int64_t c0 = pass.co0 + u * kPart, cu = std::min(kPart, pass.cw - u * kPart);
      const Tile dst = box(dyTiles_[slot].partitionSlice(0, static_cast<int32_t>(cu)).select(0, u),
                           zero, chunk.extent, one);
      b_.dmaCopy(dst, dy_.select(0, chunk.batch)
                          .slice(0, c0, c0 + cu)
                          .slice(1, chunk.origin[0], chunk.origin[0] + chunk.extent[0])
                          .slice(2, chunk.origin[1], chunk.origin[1] + chunk.extent[1])
                          .slice(3, chunk.origin[2], chunk.origin[2] + chunk.extent[2]));
    }
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
    Prepared p{dyT_[dyTCount_++ % kBuffers].partitionSlice(0, npos).slice(0, 0, pass.cw), {}};
    for (int64_t u = 0; u * kPart < pass.cw; ++u) {
      const int64_t cu = std::min(kPart, pass.cw - u * kPart);
      const Tile src = box(dyTiles_[slot].partitionSlice(0, static_cast<int32_t>(cu)).select(0, u),
                           origin, count, one);
      copy(p.dyT.slice(0, u * kPart, u * kPart + cu), transpose(src, npos, cu));
    }
    const Int3& k = fwd_.taps;
    const Tile window = windows_[slot].partitionSlice(0, static_cast<int32_t>(pass.cs));
    for (int64_t g = 0; g < pass.taps; ++g) {
      const int64_t tap = pass.g0 + g;
      const Int3 kk{tap / (k[1] * k[2]), tap / k[2] % k[1], tap % k[2]};
      Int3 start;
      for (int a = 0; a < 3; ++a) start[a] = origin[a] * fwd_.stride[a] + kk[a] * fwd_.dilation[a];
      p.xTs.push_back(xT_[xTCount_++ % kXtRing].partitionSlice(0, npos).slice(0, 0, pass.cs));
      const Tile src = plan_.perTap ? box(window.select(0, g), origin, count, {1, 1, 1})
                                    : box(window, start, count, fwd_.stride);
      copy(p.xTs.back(), transpose(src, npos, pass.cs));
    }
    return p;
  }

  /// src [cols partitions, rows free] transposed into the PSUM ring: [rows, cols].
  Tile transpose(const Tile& src, int32_t rows, int64_t cols) {
    const Tile dst =
        transposed_[transposeCount_++ % kTransposeRing].partitionSlice(0, rows).slice(0, 0, cols);
    b_.transpose(dst, src);
    return dst;
  }

  void copy(const Tile& dst, const Tile& src) {
    if (copyCount_++ % 2 == 0) {
      b_.tensorCopy(dst, src, isa::Engine::Vector);
    } else {
      b_.activation(dst, src, isa::ActFn::Copy);
    }
  }

  KernelBuilder& b_;
  const ConvCore& fwd_;
  DwPlan plan_;
  isa::Dtype dtype_;
  HbmView dy_, x_, dw_;
  std::vector<Tile> windows_, stages_, dyTiles_, xT_, dyT_, outs_, acc_, transposed_;
  int64_t outCount_ = 0, dyTCount_ = 0, xTCount_ = 0, transposeCount_ = 0, copyCount_ = 0;
};

}  // namespace

void buildConvDw(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype,
                 const HbmView& dy, const HbmView& x, const HbmView& dw) {
  DwEmitter(builder, forward, dtype, dy, x, dw).run();
}

}  // namespace neuronsim::kernels
