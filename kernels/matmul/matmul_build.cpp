// The tiled matmul program: resident rhs column groups, double-buffered lhsT, PSUM
// accumulation over K tiles, eviction alternating Vector/Scalar, stores on round-robin queues.
#include "kernels/matmul/matmul_build.h"

#include <algorithm>

#include "isa/dtype.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kPart = 128;  // K and M tile (partitions)
constexpr int64_t kFree = 512;  // N tile (one PSUM bank of fp32)
constexpr int kPsumBuffers = 4;
constexpr int kOutBuffers = 4;
constexpr int64_t kLoadChunks = 4;  // DMAs per multi-K-tile load

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Copies the K rows of `src` (a [K, cols] HBM view) into tile [128, kt, cols]: the full K
/// tiles in up to kLoadChunks DMAs (so matmuls can start on the first), a tail of fewer than
/// 128 rows in one more.
void loadKTiles(KernelBuilder& b, const HbmView& src, const Tile& dst, int64_t k,
                DmaOptions options) {
  const int64_t full = k / kPart;
  const int64_t tail = k % kPart;
  const int64_t chunks = std::min<int64_t>(kLoadChunks, full);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t t0 = full * c / chunks, t1 = full * (c + 1) / chunks;
    HbmView body =
        src.slice(0, t0 * kPart, t1 * kPart).split(0, {t1 - t0, kPart}).permute({1, 0, 2});
    b.dmaCopy(dst.slice(0, t0, t1), body, options);
  }
  if (tail > 0)
    b.dmaCopy(dst.partitionSlice(0, static_cast<int32_t>(tail)).select(0, full),
              src.slice(0, full * kPart, k), options);
}

/// Stores are triggered from GpSimd so that Sync's in-order stream of loads (prefetches) never
/// waits behind a store that waits for compute.
constexpr DmaOptions kStore{.queue = -1, .issue = isa::Engine::GpSimd};
/// Loads share one queue: its transfers complete in order at full bandwidth, so the first
/// tiles arrive first (the rhs tile and lhsT rows the first matmuls need).
constexpr DmaOptions kLoad{.queue = 0, .issue = isa::Engine::Sync};

struct Evictor {
  KernelBuilder& b;
  int64_t count = 0;
  void operator()(const Tile& dst, const Tile& src) {
    if (count++ % 2 == 0) {
      b.tensorCopy(dst, src, isa::Engine::Vector);
    } else {
      b.activation(dst, src, isa::ActFn::Copy);
    }
  }
};

/// Any K: every (m, n) tile streams its lhsT and rhs K tiles through small rings.
void buildStreaming(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, const HbmView& out,
                    isa::Dtype dtype) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  constexpr int kRing = 3;
  std::vector<Tile> lring, rring, psums, outs;
  for (int i = 0; i < kRing; ++i) {
    lring.push_back(b.sbuf({kPart, kPart}, dtype, "lhsT_" + std::to_string(i)));
    rring.push_back(b.sbuf({kPart, kFree}, dtype, "rhs_" + std::to_string(i)));
  }
  for (int i = 0; i < kPsumBuffers; ++i)
    psums.push_back(b.psum({kPart, kFree}, isa::Dtype::Fp32, "acc_" + std::to_string(i)));
  for (int i = 0; i < kOutBuffers; ++i)
    outs.push_back(b.sbuf({kPart, kFree}, isa::Dtype::Fp32, "out_" + std::to_string(i)));
  Evictor evict{b};
  int64_t ring = 0, tileIndex = 0;
  for (int64_t m0 = 0; m0 < M; m0 += kPart) {
    const int64_t ms = std::min(kPart, M - m0);
    for (int64_t n0 = 0; n0 < N; n0 += kFree, ++tileIndex) {
      const int64_t ns = std::min(kFree, N - n0);
      const Tile ps = psums[tileIndex % kPsumBuffers]
                          .partitionSlice(0, static_cast<int32_t>(ms))
                          .slice(0, 0, ns);
      for (int64_t k0 = 0; k0 < K; k0 += kPart, ++ring) {
        const int32_t ks = static_cast<int32_t>(std::min(kPart, K - k0));
        const Tile lt = lring[ring % kRing].partitionSlice(0, ks).slice(0, 0, ms);
        const Tile rt = rring[ring % kRing].partitionSlice(0, ks).slice(0, 0, ns);
        b.setNote("load lhsT");
        b.dmaCopy(lt, lhsT.slice(0, k0, k0 + ks).slice(1, m0, m0 + ms));
        b.setNote("load rhs");
        b.dmaCopy(rt, rhs.slice(0, k0, k0 + ks).slice(1, n0, n0 + ns));
        b.setNote("matmul");
        b.matmul(ps, lt, rt, k0 > 0);
      }
      const Tile ot =
          outs[tileIndex % kOutBuffers].partitionSlice(0, static_cast<int32_t>(ms)).slice(0, 0, ns);
      b.setNote("evict psum");
      evict(ot, ps);
      b.setNote("store out");
      b.dmaCopy(out.slice(0, m0, m0 + ms).slice(1, n0, n0 + ns), ot, kStore);
    }
  }
}

}  // namespace

void buildMatmul(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs, const HbmView& out,
                 isa::Dtype dtype) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = ceilDiv(K, kPart);
  const int64_t bytes = isa::dtypeBytes(dtype);
  const int64_t capacity = b.geometry().sbufPartitionBytes;
  const int64_t fixed =
      kOutBuffers * kFree * 4 + 2 * kt * kPart * bytes;  // out ring + lhsT double buffer
  const int64_t rhsBudget = (capacity - fixed) / 2;      // rhs double buffer
  const int64_t nTiles = ceilDiv(N, kFree);
  const int64_t groupTiles = rhsBudget > 0 ? std::min(nTiles, rhsBudget / (kt * kFree * bytes)) : 0;
  if (groupTiles < 1) {
    buildStreaming(b, lhsT, rhs, out, dtype);
    return;
  }
  const int64_t groupCols = std::min(N, groupTiles * kFree);
  std::vector<Tile> rhsBuf, lhsBuf, psums, outs;
  for (int i = 0; i < 2; ++i) {
    rhsBuf.push_back(b.sbuf({kPart, kt, groupCols}, dtype, "rhs_" + std::to_string(i)));
    lhsBuf.push_back(b.sbuf({kPart, kt, kPart}, dtype, "lhsT_" + std::to_string(i)));
  }
  for (int i = 0; i < kPsumBuffers; ++i)
    psums.push_back(b.psum({kPart, kFree}, isa::Dtype::Fp32, "acc_" + std::to_string(i)));
  for (int i = 0; i < kOutBuffers; ++i)
    outs.push_back(b.sbuf({kPart, kFree}, isa::Dtype::Fp32, "out_" + std::to_string(i)));

  Evictor evict{b};
  int64_t group = 0, mIndex = 0, tileIndex = 0;
  for (int64_t g0 = 0; g0 < N; g0 += groupCols, ++group) {
    const int64_t gs = std::min(groupCols, N - g0);
    const Tile rb = rhsBuf[group % 2].slice(1, 0, gs);
    auto loadRhs = [&](int64_t n0) {
      b.setNote("load rhs");
      const int64_t n1 = std::min(gs, n0 + kFree);
      loadKTiles(b, rhs.slice(1, g0 + n0, g0 + n1), rb.slice(1, n0, n1), K, kLoad);
    };
    loadRhs(0);
    for (int64_t m0 = 0; m0 < M; m0 += kPart, ++mIndex) {
      const int64_t ms = std::min(kPart, M - m0);
      const Tile lb = lhsBuf[mIndex % 2].slice(1, 0, ms);
      b.setNote("load lhsT");
      loadKTiles(b, lhsT.slice(1, m0, m0 + ms), lb, K, kLoad);
      if (m0 == 0)
        for (int64_t n0 = kFree; n0 < gs; n0 += kFree) loadRhs(n0);
      for (int64_t n0 = 0; n0 < gs; n0 += kFree, ++tileIndex) {
        const int64_t ns = std::min(kFree, gs - n0);
        const Tile ps = psums[tileIndex % kPsumBuffers]
                            .partitionSlice(0, static_cast<int32_t>(ms))
                            .slice(0, 0, ns);
        b.setNote("matmul");
        for (int64_t k = 0; k < kt; ++k) {
          const int32_t ks = static_cast<int32_t>(std::min(kPart, K - k * kPart));
          b.matmul(ps, lb.partitionSlice(0, ks).select(0, k),
                   rb.partitionSlice(0, ks).select(0, k).slice(0, n0, n0 + ns), k > 0);
        }
        const Tile ot = outs[tileIndex % kOutBuffers]
                            .partitionSlice(0, static_cast<int32_t>(ms))
                            .slice(0, 0, ns);
        b.setNote("evict psum");
        evict(ot, ps);
        b.setNote("store out");
        b.dmaCopy(out.slice(0, m0, m0 + ms).slice(1, g0 + n0, g0 + n0 + ns), ot, kStore);
      }
    }
  }
}

}  // namespace neuronsim::kernels
