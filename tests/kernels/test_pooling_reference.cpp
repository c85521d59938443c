// Pooling references on hand-computed cases, window arithmetic against brute force, the tiling
// plan's invariants and the parameter errors.

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "isa/error.h"
#include "kernels/pooling/max_pool_select.h"
#include "kernels/pooling/pooling_axis.h"
#include "kernels/pooling/pooling_params.h"
#include "kernels/pooling/pooling_plan.h"
#include "kernels/reference/pooling_ref.h"
#include "kernels/registry.h"

using namespace neuronsim::kernels;

namespace {

PoolingConfig config1d(int64_t w, int64_t k, int64_t s, int64_t p) {
  PoolingConfig c;
  c.input = {1, 1, w};
  c.kernel = {1, 1, k};
  c.stride = {1, 1, s};
  c.padding = {0, 0, p};
  return c;
}

std::string errorOf(const std::string& kernel, const Shape& input,
                    const std::vector<std::pair<std::string, std::string>>& params) {
  try {
    poolingConfig(kernel, input, parseParams(findKernel(kernel), params));
  } catch (const neuronsim::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("pooling reference: average of a 2x2x2 cube") {
  PoolingConfig c;
  c.input = {2, 2, 2};
  c.kernel = c.stride = {2, 2, 2};
  CHECK(avgPool3dRef(c, {1, 2, 3, 4, 5, 6, 7, 8}) == std::vector<float>{4.5f});
  CHECK(maxPool3dRef(c, {1, 2, 3, 9, 5, 6, 7, 8}) == std::vector<float>{9.0f});
}

TEST_CASE("pooling reference: padding is zero for average, -inf for max") {
  const PoolingConfig c = config1d(3, 2, 1, 1);
  CHECK(c.output() == Spatial{1, 1, 4});
  CHECK(maxPool3dRef(c, {-1, 5, -3}) == std::vector<float>{-1, 5, 5, -3});
  CHECK(avgPool3dRef(c, {-1, 5, -3}) == std::vector<float>{-0.5f, 2, 1, -1.5f});
}

TEST_CASE("pooling reference: average backward spreads with 1/k") {
  const PoolingConfig c = config1d(3, 2, 1, 0);
  CHECK(avgPool3dBackwardRef(c, {1, 2}) == std::vector<float>{0.5f, 1.5f, 1.0f});
  const PoolingConfig gap = config1d(5, 1, 3, 0);
  CHECK(avgPool3dBackwardRef(gap, {4, 7}) == std::vector<float>{4, 0, 0, 7, 0});
}

TEST_CASE("pooling reference: max backward gives each window's gradient to its first maximum") {
  const PoolingConfig c = config1d(4, 2, 1, 1);
  const std::vector<float> x{3, 3, 1, 3};
  const std::vector<float> maxima = maxPool3dRef(c, x);
  CHECK(maxima == std::vector<float>{3, 3, 3, 3, 3});
  CHECK(maxPool3dBackwardRef(c, {1, 10, 100, 1000, 10000}, x, maxima) ==
        std::vector<float>{11, 100, 0, 11000});
  CHECK(maxPool3dBackwardRef(c, {1, 1, 1, 1, 1}, x, {7, 7, 7, 7, 7}) ==
        std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("pooling reference: NaN is the maximum and takes the gradient, the last NaN first") {
  const float nan = std::nanf("");
  const PoolingConfig c = config1d(5, 3, 1, 1);
  const std::vector<float> x{1, nan, 2, nan, 0};
  const std::vector<float> maxima = maxPool3dRef(c, x);
  REQUIRE(maxima.size() == 5);
  for (float m : maxima) CHECK(std::isnan(m));
  // Windows [p,1,nan], [1,nan,2], [nan,2,nan], [2,nan,0], [nan,0,p]: the last NaN of each.
  CHECK(maxPool3dBackwardRef(c, {1, 10, 100, 1000, 10000}, x, maxima) ==
        std::vector<float>{0, 11, 0, 11100, 0});
  const std::vector<float> inf{1, std::numeric_limits<float>::infinity(), 3};
  const PoolingConfig k2 = config1d(3, 2, 1, 0);
  CHECK(maxPool3dRef(k2, inf) == std::vector<float>{inf[1], inf[1]});
  CHECK(maxPool3dBackwardRef(k2, {1, 10}, inf, maxPool3dRef(k2, inf)) ==
        std::vector<float>{0, 11, 0});
}

TEST_CASE("pooling reference: NDHWC equals NCDHW on the transposed tensor") {
  PoolingConfig nc;
  nc.batch = 2;
  nc.channels = 3;
  nc.input = {3, 4, 2};
  nc.kernel = {2, 3, 1};
  nc.stride = {1, 1, 1};
  nc.padding = {1, 1, 0};
  PoolingConfig nd = nc;
  nd.dataFormat = nd.outputFormat = PoolLayout::Ndhwc;
  std::vector<float> xNc(2 * 3 * 3 * 4 * 2), xNd(xNc.size());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t d = 0; d < 3; ++d)
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t w = 0; w < 2; ++w) {
            const float v = static_cast<float>((b * 31 + c * 17 + d * 7 + h * 3 + w * 5) % 13);
            xNc[nc.index(PoolLayout::Ncdhw, nc.input, b, c, d, h, w)] = v;
            xNd[nd.index(PoolLayout::Ndhwc, nd.input, b, c, d, h, w)] = v;
          }
  const std::vector<float> yNc = avgPool3dRef(nc, xNc), yNd = avgPool3dRef(nd, xNd);
  const Spatial o = nc.output();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t d = 0; d < o[0]; ++d)
        for (int64_t h = 0; h < o[1]; ++h)
          for (int64_t w = 0; w < o[2]; ++w) {
            CHECK(yNc[nc.index(PoolLayout::Ncdhw, o, b, c, d, h, w)] ==
                  yNd[nd.index(PoolLayout::Ndhwc, o, b, c, d, h, w)]);
          }
}

TEST_CASE("pooling axis: touching outputs and tap ranges equal brute force") {
  for (int64_t n = 1; n <= 9; ++n)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 4; ++s)
        for (int64_t p = 0; 2 * p <= k; ++p) {
          if (k > n + 2 * p) continue;
          const PoolAxis ax{n, k, s, p};
          for (int64_t lo = 0; lo < n; ++lo)
            for (int64_t hi = lo + 1; hi <= n; ++hi) {
              std::set<int64_t> touching;
              for (int64_t o = 0; o < ax.outputs(); ++o)
                for (int64_t t = 0; t < k; ++t)
                  if (ax.inputOf(o, t) >= lo && ax.inputOf(o, t) < hi) touching.insert(o);
              const Range r = ax.outputsTouching({lo, hi});
              INFO("n=" << n << " k=" << k << " s=" << s << " p=" << p << " [" << lo << "," << hi
                        << ")");
              CHECK(r.size() == static_cast<int64_t>(touching.size()));
              if (!touching.empty()) CHECK(r.lo == *touching.begin());
              for (int64_t t = 0; t < k; ++t) {
                int64_t count = 0;
                for (int64_t o = r.lo; o < r.hi; ++o)
                  count += ax.inputOf(o, t) >= lo && ax.inputOf(o, t) < hi;
                const Range tr = ax.tapOutputs(t, {lo, hi}, r);
                CHECK(tr.size() == count);
                for (int64_t o = tr.lo; o < tr.hi; ++o)
                  CHECK((ax.inputOf(o, t) >= lo && ax.inputOf(o, t) < hi));
              }
            }
        }
}

TEST_CASE("pooling plan: chunks tile the problem, fit the budget, and cut D then H") {
  PoolingConfig c;
  c.input = {13, 12, 9};
  c.kernel = {3, 2, 3};
  c.stride = {2, 1, 3};
  c.padding = {1, 1, 1};
  const Spatial o = c.output();
  const ChunkBytes bytes = [](const ChunkExtents& e) {
    return bufferBytes(e.inputs[0] * e.inputs[1] * e.inputs[2], 4) +
           bufferBytes(e.outputs[0] * e.outputs[1] * e.outputs[2], 4) +
           bufferBytes(e.owned[0] * e.owned[1] * e.owned[2], 4);
  };
  for (ChunkBy by : {ChunkBy::Input, ChunkBy::Output}) {
    const Spatial full = by == ChunkBy::Input ? c.input : o;
    for (int64_t budget : {100000, 2000, 1000, 640}) {
      const std::vector<PoolChunk> chunks = planChunks("k", c, by, bytes, budget);
      int64_t owned = 0;
      bool cutH = false;
      for (const PoolChunk& ch : chunks) {
        CHECK(bytes({{ch.owned[0].size(), ch.owned[1].size(), ch.owned[2].size()},
                     {ch.outputs[0].size(), ch.outputs[1].size(), ch.outputs[2].size()},
                     {ch.inputs[0].size(), ch.inputs[1].size(), ch.inputs[2].size()}}) <= budget);
        owned += ch.owned[0].size() * ch.owned[1].size() * ch.owned[2].size();
        cutH = cutH || ch.owned[1].size() < full[1];
      }
      CHECK(owned == full[0] * full[1] * full[2]);
      if (budget == 100000) CHECK(chunks.size() == 1);
      if (budget == 640) CHECK(cutH);
    }
  }
  CHECK_THROWS_WITH_AS(planChunks("k", c, ChunkBy::Input, bytes, 100),
                       doctest::Contains("k: a single pooling window"), neuronsim::Error);
}

TEST_CASE("pooling parameters: errors name the kernel and the culprit") {
  CHECK(errorOf("max_pooling_3d_backward", {1, 2, 8, 8, 8},
                {{"kernel_size", "3"}, {"padding", "2,1,1"}}) ==
        "max_pooling_3d_backward: padding 2 exceeds kernel_size/2 on D");
  CHECK(errorOf("avg_pooling_3d", {1, 2, 8, 8, 8}, {{"stride", "1,0,1"}}) ==
        "avg_pooling_3d: stride 0 is below 1 on H");
  CHECK(errorOf("avg_pooling_3d", {1, 2, 8, 8}, {}) ==
        "avg_pooling_3d: input_tensor has shape [1,2,8,8] but must be 5-D NCDHW");
  CHECK(errorOf("max_pooling_3d", {1, 2, 8, 8, 3}, {{"kernel_size", "4"}}) ==
        "max_pooling_3d: kernel_size 4 exceeds the padded input 3 on W");
  CHECK(errorOf("avg_pooling_3d", {1, 8, 8, 8, 2}, {{"data_format", "NDHWC"}, {"kernel_size", "2"}})
            .empty());
  const KernelSpec& spec = findKernel("max_pooling_3d_backward");
  const ParamValues params = parseParams(spec, {});
  CHECK_THROWS_WITH_AS(spec.inferShapes({{"input_tensor", {1, 2, 4, 4, 4}},
                                         {"grad_output", {1, 2, 2, 2, 2}},
                                         {"output_tensor", {1, 2, 2, 2, 3}}},
                                        params),
                       "max_pooling_3d_backward: output_tensor has shape [1,2,2,2,3] but "
                       "grad_output has [1,2,2,2,2]",
                       neuronsim::Error);
  CHECK(spec.inferShapes({{"input_tensor", {1, 2, 4, 4, 4}},
                          {"grad_output", {1, 2, 2, 2, 2}},
                          {"output_tensor", {1, 2, 2, 2, 2}}},
                         params)
            .at("grad_input") == Shape{1, 2, 4, 4, 4});
}

TEST_CASE("max backward lanes: the share closest to the percentage, an even VectorE lane") {
  using neuronsim::isa::Engine;
  auto split = [](const Box& box, int64_t percent) {
    const std::vector<Lane> lanes = splitLanes(box, percent);
    int64_t gpsimd = 0, vector = 0;
    for (const Lane& lane : lanes) {
      (lane.engine == Engine::GpSimd ? gpsimd : vector) += boxElements(lane.box);
    }
    CHECK(gpsimd + vector == boxElements(box));
    return std::pair{gpsimd, vector};
  };
  // 21 x 21 outputs at 37 %: 8 rows would leave 13 x 21 (odd) to VectorE, so 7 go to GpSimd.
  auto [g, v] = split(Box{Range{0, 1}, Range{0, 21}, Range{0, 21}}, 37);
  CHECK(g == 7 * 21);
  CHECK(v % 2 == 0);
  // D 4 would give 1 of 4 (25 %) at 30 %; H 10 gives 3 of 10 exactly.
  std::tie(g, v) = split(Box{Range{0, 4}, Range{0, 10}, Range{0, 8}}, 30);
  CHECK(g == 4 * 3 * 8);
  // 0 and 100 keep one lane; a single output too.
  CHECK(split(Box{Range{0, 4}, Range{0, 10}, Range{0, 8}}, 0).first == 0);
  CHECK(split(Box{Range{0, 4}, Range{0, 10}, Range{0, 8}}, 100).second == 0);
  CHECK(splitLanes(Box{Range{0, 1}, Range{0, 1}, Range{0, 1}}, 40).size() == 1);
}

namespace {

/// One work item of a pooling problem whose chunk is the whole of `axes`: the GpSimd lane's
/// outputs that balancedLanes gives it.
int64_t balancedGpsimd(const SelectWork& work, const std::array<PoolAxis, 3>& axes,
                       const neuronsim::isa::Geometry& geometry,
                       const std::vector<double>& fills = {}) {
  PoolChunk chunk;
  for (int a = 0; a < 3; ++a) {
    chunk.inputs[a] = chunk.owned[a] = Range{0, axes[a].n};
    chunk.outputs[a] = Range{0, axes[a].outputs()};
  }
  const std::vector<TapBox> taps = chunkTaps(axes, chunk);
  int64_t gpsimd = 0, all = 0;
  for (const Lane& lane :
       balancedLanes(work, chunk.inputs, chunk.owned, chunk.outputs, taps, fills, geometry)) {
    all += boxElements(lane.box);
    if (lane.engine == neuronsim::isa::Engine::GpSimd) gpsimd += boxElements(lane.box);
  }
  CHECK(all == boxElements(chunk.outputs));
  return gpsimd;
}

}  // namespace

TEST_CASE("max backward balance: the GpSimd lane follows the machine's engine rates") {
  neuronsim::isa::Geometry trn2;  // defaults: the Trn2 preset
  SelectWork bench;               // B2 C64 16x64x64 k2 fp32: 2x32x32 outputs per item
  bench.otInPsum = true;
  bench.operandInPsum = true;
  bench.lastInPsum = true;
  const std::array<PoolAxis, 3> k2{PoolAxis{4, 2, 2, 0}, PoolAxis{64, 2, 2, 0},
                                   PoolAxis{64, 2, 2, 0}};
  const int64_t base = balancedGpsimd(bench, k2, trn2);
  CHECK(base > 0);
  CHECK(base < 2 * 32 * 32 * 6 / 10);
  // A faster GpSimd takes more; a faster VectorE less.
  neuronsim::isa::Geometry fastPool = trn2;
  fastPool.gpsimdGhz *= 2;
  CHECK(balancedGpsimd(bench, k2, fastPool) > base);
  neuronsim::isa::Geometry fastVector = trn2;
  fastVector.vectorGhz *= 2;
  CHECK(balancedGpsimd(bench, k2, fastVector) < base);
  // Compares from SBUF cost VectorE twice as much: GpSimd takes more.
  SelectWork sbufCompares = bench;
  sbufCompares.otInPsum = false;
  CHECK(balancedGpsimd(sbufCompares, k2, trn2) > base);
  // A shared SBUF port (NC-v2) makes the two take turns: GpSimd's dearer work is not worth it.
  neuronsim::isa::Geometry shared = trn2;
  shared.accessConflicts = true;
  CHECK(balancedGpsimd(bench, k2, shared) < base);
  // A costlier GpSimd start per instruction takes less.
  neuronsim::isa::Geometry slowStart = trn2;
  slowStart.gpsimdStartCycles = 1500;
  CHECK(balancedGpsimd(bench, k2, slowStart) < base);
  // The lane's sweeps wait for ScalarE's weights behind the item's scatter: at most the 30 %
  // measured best (VectorE and GpSimd busy alone would balance at about 34 %).
  INFO("GpSimd outputs " << base);
  CHECK(base * 100 <= 2 * 32 * 32 * 30);
  CHECK(base * 100 >= 2 * 32 * 32 * 20);
  // Halo fills the item's loads put on GpSimd leave it less of the sweeps.
  CHECK(balancedGpsimd(bench, k2, trn2, {16384.0, 16384.0}) < base);
}

TEST_CASE("max backward balance: each engine's fixed cost per instruction") {
  neuronsim::isa::Geometry trn2;
  SelectWork work;
  work.otInPsum = true;
  work.operandInPsum = true;
  work.lastInPsum = true;
  // 1x21x21 outputs, k3 (2x64x18x63x63's items): a GpSimd lane of 6 or 7 rows of 21.
  const std::array<PoolAxis, 3> k3{PoolAxis{3, 3, 3, 0}, PoolAxis{63, 3, 3, 0},
                                   PoolAxis{63, 3, 3, 0}};
  const int64_t wide = balancedGpsimd(work, k3, trn2);
  CHECK(wide >= 5 * 21);
  CHECK(wide <= 7 * 21);
  // 2x4x4 outputs, k2: a split would pay two starts and a second VectorE floor per step.
  const std::array<PoolAxis, 3> small{PoolAxis{4, 2, 2, 0}, PoolAxis{8, 2, 2, 0},
                                      PoolAxis{8, 2, 2, 0}};
  CHECK(balancedGpsimd(work, small, trn2) == 0);
  // Without GpSimd's start and VectorE's floor the same item is split.
  neuronsim::isa::Geometry noFixed = trn2;
  noFixed.gpsimdStartCycles = 0;
  noFixed.minIiCycles = 0;
  CHECK(balancedGpsimd(work, small, noFixed) > 0);
  // A costlier start refuses the wide lane too.
  neuronsim::isa::Geometry slowStart = trn2;
  slowStart.gpsimdStartCycles = 3000;
  CHECK(balancedGpsimd(work, k3, slowStart) == 0);
  // Padding keys both lanes: the split doubles ScalarE's weights and their floors, so the
  // padded item takes a smaller GpSimd lane than the chained one, or none.
  const std::array<PoolAxis, 3> k3p1{PoolAxis{3, 3, 3, 0}, PoolAxis{63, 3, 3, 1},
                                     PoolAxis{63, 3, 3, 1}};
  CHECK(balancedGpsimd(work, k3p1, trn2) < wide);
}
