// The tiled and hoisted-load tutorial kernels (T1 sections "Tiling matrix multiplications" and
// "Optimization 1: Removing Redundant Loads"; T2 "Writing the kernel" and "Analyzing the kernel").
// T2's kernels were compared statement by statement with aws-neuron-sdk
// nki/guides/tutorials/kernel-optimization.rst (date-modified 12/02/2025): the same loops, tiles,
// loads, matmuls, fp32 PSUM copy-out and stores; the DMA trigger engines and queues and the copy
// engine are the compiler's choice there and ours here (tutorial_common.h).
#include "kernels/tutorials/tutorial_build.h"
#include "kernels/tutorials/tutorial_common.h"

namespace neuronsim::kernels {

void buildTutorialTiled(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                        const HbmView& out, const TutorialOptions& options) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const isa::Dtype dtype = lhsT.dtype();
  auto t = allocateLoopTensors(
      b,
      {{isa::Space::Psum, {kTutorialTileM, kTutorialTileN}, isa::Dtype::Fp32, "res_psum", 2},
       {isa::Space::Sbuf, {kTutorialTileK, kTutorialTileM}, dtype, "lhsT_tile", 3},
       {isa::Space::Sbuf, {kTutorialTileK, kTutorialTileN}, dtype, "rhs_tile", 3},
       {isa::Space::Sbuf, {kTutorialTileM, kTutorialTileN}, options.staging, "res_sb", 2}},
      options.loopBuffers);
  LoopTensor &psum = t[0], &lhsTile = t[1], &rhsTile = t[2], &resSb = t[3];
  for (int64_t m = 0; m < M / kTutorialTileM; ++m)
    for (int64_t n = 0; n < N / kTutorialTileN; ++n) {
      const Tile& ps = psum.next();
      for (int64_t k = 0; k < K / kTutorialTileK; ++k) {
        const Tile& lt = lhsTile.next();
        const Tile& rt = rhsTile.next();
        b.setNote("load lhsT");
        b.dmaCopy(lt, tileOf(lhsT, k, kTutorialTileK, m, kTutorialTileM), kTutorialLoad);
        b.setNote("load rhs");
        b.dmaCopy(rt, tileOf(rhs, k, kTutorialTileK, n, kTutorialTileN), kTutorialLoad);
        b.setNote("matmul");
        b.matmul(ps, lt, rt, k > 0);
      }
      const Tile& sb = resSb.next();
      b.setNote("evict psum");
      b.tensorCopy(sb, ps, kTutorialCopyEngine);
      b.setNote("store out");
      b.dmaCopy(tileOf(out, m, kTutorialTileM, n, kTutorialTileN), sb, kTutorialStore);
    }
}

void buildTutorialHoisted(KernelBuilder& b, const HbmView& lhsT, const HbmView& rhs,
                          const HbmView& out, const TutorialOptions& options) {
  const int64_t K = lhsT.size(0), M = lhsT.size(1), N = rhs.size(1);
  const int64_t kt = K / kTutorialTileK;
  const isa::Dtype dtype = lhsT.dtype();
  // T1 declares lhsT_tiles with TILE_N (512) columns but fills and reads only TILE_M (128);
  // T2 declares TILE_M. We allocate the 128 columns used.
  auto t = allocateLoopTensors(
      b,
      {{isa::Space::Sbuf, {kTutorialTileK, kt, kTutorialTileM}, dtype, "lhsT_tiles", 1},
       {isa::Space::Sbuf, {kTutorialTileK, kt, kTutorialTileN}, dtype, "rhs_tiles", 2},
       {isa::Space::Psum, {kTutorialTileM, kTutorialTileN}, isa::Dtype::Fp32, "res_psum", 2},
       {isa::Space::Sbuf, {kTutorialTileM, kTutorialTileN}, options.staging, "res_sb", 2}},
      options.loopBuffers);
  LoopTensor &lhsTiles = t[0], &rhsTiles = t[1], &psum = t[2], &resSb = t[3];
  for (int64_t m = 0; m < M / kTutorialTileM; ++m) {
    const Tile& lt = lhsTiles.next();
    b.setNote("load lhsT");
    for (int64_t k = 0; k < kt; ++k)
      b.dmaCopy(lt.select(0, k), tileOf(lhsT, k, kTutorialTileK, m, kTutorialTileM), kTutorialLoad);
    for (int64_t n = 0; n < N / kTutorialTileN; ++n) {
      const Tile& rt = rhsTiles.next();
      b.setNote("load rhs");
      for (int64_t k = 0; k < kt; ++k)
        b.dmaCopy(rt.select(0, k), tileOf(rhs, k, kTutorialTileK, n, kTutorialTileN),
                  kTutorialLoad);
      const Tile& ps = psum.next();
      b.setNote("matmul");
      for (int64_t k = 0; k < kt; ++k) b.matmul(ps, lt.select(0, k), rt.select(0, k), k > 0);
      const Tile& sb = resSb.next();
      b.setNote("evict psum");
      b.tensorCopy(sb, ps, kTutorialCopyEngine);
      b.setNote("store out");
      b.dmaCopy(tileOf(out, m, kTutorialTileM, n, kTutorialTileN), sb, kTutorialStore);
    }
  }
}

}  // namespace neuronsim::kernels
