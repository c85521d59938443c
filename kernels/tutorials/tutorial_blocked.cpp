// The blocked tutorial kernels (T1 sections "Optimization 2: Reuse More Load Through Blocking"
// and "Optimization 3: Further Blocking and DMA Efficiency Optimization").
#include "kernels/tutorials/tutorial_build.h"
#include "kernels/tutorials/tutorial_common.h"

namespace neuronsim::kernels {

void buildTutorialBlockedFree(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                              const HbmView& out, const TutorialOptions& options) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const TutorialBlocks& blocks = options.blocks;
  const int64_t kt = K / kTutorialTileK;
  const isa::Dtype dtype = lhsT.dtype();
  auto t = allocateLoopTensors(
      b,
      {{isa::Space::Sbuf, {kTutorialTileK, blocks.m, kt, kTutorialTileM}, dtype, "lhsT_tiles", 1},
       {isa::Space::Sbuf, {kTutorialTileK, blocks.n, kt, kTutorialTileN}, dtype, "rhs_tiles", 2},
       {isa::Space::Psum, {kTutorialTileM, kTutorialTileN}, isa::Dtype::Fp32, "res_psum", 4},
       {isa::Space::Sbuf, {kTutorialTileM, kTutorialTileN}, dtype, "res_sb", 4}},
      options.loopBuffers);
  LoopTensor &lhsTiles = t[0], &rhsTiles = t[1], &psum = t[2], &resSb = t[3];
  for (int64_t m = 0; m < M / (kTutorialTileM * blocks.m); ++m) {
    const Tile& lt = lhsTiles.next();
    b.setNote("load lhsT");
    for (int64_t bm = 0; bm < blocks.m; ++bm)
      for (int64_t k = 0; k < kt; ++k)
        b.dmaCopy(lt.select(0, bm).select(0, k),
                  tileOf(lhsT, k, kTutorialTileK, m * blocks.m + bm, kTutorialTileM),
                  kTutorialLoad);
    for (int64_t n = 0; n < N / (kTutorialTileN * blocks.n); ++n) {
      const Tile& rt = rhsTiles.next();
      b.setNote("load rhs");
      for (int64_t bn = 0; bn < blocks.n; ++bn)
        for (int64_t k = 0; k < kt; ++k)
          b.dmaCopy(rt.select(0, bn).select(0, k),
                    tileOf(rhs, k, kTutorialTileK, n * blocks.n + bn, kTutorialTileN),
                    kTutorialLoad);
      for (int64_t bm = 0; bm < blocks.m; ++bm)
        for (int64_t bn = 0; bn < blocks.n; ++bn) {
          const Tile& ps = psum.next();
          b.setNote("matmul");
          for (int64_t k = 0; k < kt; ++k)
            b.matmul(ps, lt.select(0, bm).select(0, k), rt.select(0, bn).select(0, k), k > 0);
          const Tile& sb = resSb.next();
          b.setNote("evict psum");
          b.tensorCopy(sb, ps, kTutorialCopyEngine);
          b.setNote("store out");
          b.dmaCopy(
              tileOf(out, m * blocks.m + bm, kTutorialTileM, n * blocks.n + bn, kTutorialTileN), sb,
              kTutorialStore);
        }
    }
  }
}

void buildTutorialOptimized(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                            const HbmView& out, const TutorialOptions& options) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const TutorialBlocks& blocks = options.blocks;
  const int64_t blockM = kTutorialTileM * blocks.m, blockN = kTutorialTileN * blocks.n,
                blockK = kTutorialTileK * blocks.k;
  const int64_t numBlockM = M / blockM, numBlockN = N / blockN, numBlockK = K / blockK;
  const isa::Dtype dtype = lhsT.dtype();
  auto t = allocateLoopTensors(
      b,
      {{isa::Space::Sbuf,
        {kTutorialTileM, numBlockM, blocks.m, blocks.n, kTutorialTileN},
        dtype,
        "result_tiles",
        1},
       {isa::Space::Sbuf, {kTutorialTileK, blocks.k, blockN}, dtype, "rhs_tiles", 2},
       {isa::Space::Sbuf, {kTutorialTileK, blocks.k, blockM}, dtype, "lhsT_tiles", 3},
       {isa::Space::Psum, {kTutorialTileM, kTutorialTileN}, isa::Dtype::Fp32, "res_tile", 5},
       {isa::Space::Sbuf, {kTutorialTileM, blockN}, dtype, "result_packed", 3}},
      options.loopBuffers);
  LoopTensor &resultTiles = t[0], &rhsTiles = t[1], &lhsTiles = t[2], &psum = t[3], &packed = t[4];
  for (int64_t n = 0; n < numBlockN; ++n) {
    const Tile& res = resultTiles.next();
    auto resultTile = [&](int64_t m, int64_t bm, int64_t bn) {
      return res.select(0, m).select(0, bm).select(0, bn);
    };
    // nl.zeros on the SBUF result tensor: one memset per [128, 512] tile.
    for (int64_t m = 0; m < numBlockM; ++m)
      for (int64_t bm = 0; bm < blocks.m; ++bm)
        for (int64_t bn = 0; bn < blocks.n; ++bn)
          b.memset(resultTile(m, bm, bn), 0.0f, kTutorialCopyEngine);
    for (int64_t k = 0; k < numBlockK; ++k) {  // nl.sequential_range
      const Tile& rt = rhsTiles.next();
      b.setNote("load rhs");
      for (int64_t bk = 0; bk < blocks.k; ++bk)
        b.dmaCopy(rt.select(0, bk), tileOf(rhs, blocks.k * k + bk, kTutorialTileK, n, blockN),
                  kTutorialLoad);
      for (int64_t m = 0; m < numBlockM; ++m) {
        const Tile& lt = lhsTiles.next();
        b.setNote("load lhsT");
        for (int64_t bk = 0; bk < blocks.k; ++bk)
          b.dmaCopy(lt.select(0, bk), tileOf(lhsT, blocks.k * k + bk, kTutorialTileK, m, blockM),
                    kTutorialLoad);
        for (int64_t bn = 0; bn < blocks.n; ++bn)
          for (int64_t bm = 0; bm < blocks.m; ++bm) {
            const Tile& ps = psum.next();
            b.setNote("matmul");
            for (int64_t bk = 0; bk < blocks.k; ++bk)
              b.matmul(ps,
                       lt.select(0, bk).slice(0, bm * kTutorialTileM, (bm + 1) * kTutorialTileM),
                       rt.select(0, bk).slice(0, bn * kTutorialTileN, (bn + 1) * kTutorialTileN),
                       bk > 0);
            const Tile acc = resultTile(m, bm, bn);
            b.tensorTensor(acc, acc, ps, isa::AluOp::Add, kTutorialCopyEngine);
          }
      }
    }
    for (int64_t m = 0; m < numBlockM; ++m)
      for (int64_t bm = 0; bm < blocks.m; ++bm) {
        const Tile& pk = packed.next();
        b.setNote("evict psum");
        for (int64_t bn = 0; bn < blocks.n; ++bn)
          b.tensorCopy(pk.slice(0, bn * kTutorialTileN, (bn + 1) * kTutorialTileN),
                       resultTile(m, bm, bn), kTutorialCopyEngine);
        b.setNote("store out");
        b.dmaCopy(tileOf(out, blocks.m * m + bm, kTutorialTileM, n, blockN), pk, kTutorialStore);
      }
  }
}

}  // namespace neuronsim::kernels
