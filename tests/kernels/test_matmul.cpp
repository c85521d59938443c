// matmul against its reference on many shapes, both dtypes, both tiling modes.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "kernel_check.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/reference/matmul_ref.h"
#include "test_builder_oracle.h"

using neuronsim::isa::Dtype;
using neuronsim::kernels::ShapeMap;
using neuronsim::kernels::testing::checkKernelCase;
using neuronsim::kernels::testing::KernelCase;

namespace {

KernelCase matmulCase(int64_t k, int64_t m, int64_t n, Dtype dtype = Dtype::Fp32,
                      uint64_t seed = 0) {
  return KernelCase{"matmul", {{"lhsT", {k, m}}, {"rhs", {k, n}}}, {}, dtype, seed};
}

}  // namespace

TEST_CASE("matmul reference: hand-computed 2x2") {
  // lhsT = [[1, 2], [3, 4]] is A^T for A = [[1, 3], [2, 4]]; rhs = [[5, 6], [7, 8]].
  const auto out = neuronsim::kernels::matmulReference({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2);
  CHECK(out == std::vector<float>{26, 30, 38, 44});
}

TEST_CASE("matmul fp32: 1x1x1") {
  checkKernelCase(matmulCase(1, 1, 1));
}
TEST_CASE("matmul fp32: one full tile 128x128x512") {
  checkKernelCase(matmulCase(128, 128, 512));
}
TEST_CASE("matmul fp32: odd K=130 M=129 N=513") {
  checkKernelCase(matmulCase(130, 129, 513, Dtype::Fp32, 1));
}
TEST_CASE("matmul fp32: K=256 M=64 N=1000") {
  checkKernelCase(matmulCase(256, 64, 1000, Dtype::Fp32, 2));
}
TEST_CASE("matmul fp32: K=300 M=200 N=100") {
  checkKernelCase(matmulCase(300, 200, 100, Dtype::Fp32, 3));
}
TEST_CASE("matmul fp32: K=1024 M=257 N=64") {
  checkKernelCase(matmulCase(1024, 257, 64, Dtype::Fp32, 4));
}
TEST_CASE("matmul fp32: K=7 M=3 N=1536") {
  checkKernelCase(matmulCase(7, 3, 1536, Dtype::Fp32, 5));
}
TEST_CASE("matmul bf16: odd K=130 M=129 N=513") {
  checkKernelCase(matmulCase(130, 129, 513, Dtype::Bf16, 6));
}
TEST_CASE("matmul bf16: K=256 M=256 N=512") {
  checkKernelCase(matmulCase(256, 256, 512, Dtype::Bf16, 7));
}
TEST_CASE("matmul bf16: K=1 M=130 N=2") {
  checkKernelCase(matmulCase(1, 130, 2, Dtype::Bf16, 8));
}

TEST_CASE("matmul: a table of odd shapes in fp32 and bf16") {
  struct Shape3 {
    int64_t k, m, n;
  };
  const Shape3 shapes[] = {{2, 1, 1},   {1, 1, 511},     {127, 128, 129}, {128, 1, 512},
                           {129, 2, 3}, {255, 17, 33},   {64, 130, 200},  {384, 96, 768},
                           {5, 250, 9}, {200, 128, 1025}};
  uint64_t seed = 100;
  for (const Shape3& s : shapes)
    for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16}) {
      CAPTURE(s.k);
      CAPTURE(s.m);
      CAPTURE(s.n);
      checkKernelCase(matmulCase(s.k, s.m, s.n, dtype, seed++));
    }
}

TEST_CASE("matmul: streaming mode when rhs groups do not fit SBUF (fp32 and bf16)") {
  auto machine = neuronsim::sim::loadMachine("trn2");
  machine.geometry.sbufPartitionBytes = 16 * 1024;
  checkKernelCase(matmulCase(600, 130, 600, Dtype::Fp32, 9), machine);
  checkKernelCase(matmulCase(600, 130, 600, Dtype::Bf16, 10), machine);
}

TEST_CASE("matmul: several rhs groups on a small SBUF") {
  auto machine = neuronsim::sim::loadMachine("trn2");
  machine.geometry.sbufPartitionBytes = 48 * 1024;  // room for one 512-column group per buffer
  checkKernelCase(matmulCase(256, 200, 1700, Dtype::Fp32, 11), machine);
}

TEST_CASE("matmul: the program orders every conflicting access pair") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  const KernelShapes shapes =
      checkShapes(spec, {{"lhsT", {130, 129}}, {"rhs", {130, 700}}}, params);
  neuronsim::isa::Geometry g;
  g.sbufPartitionBytes = 24 * 1024;
  const auto program = buildKernel(spec, params, shapes, Dtype::Bf16, g);
  CHECK(testing::unorderedConflicts(program).empty());
}

TEST_CASE("matmul: shape errors name the tensors") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  CHECK_THROWS_WITH_AS(
      checkShapes(spec, {{"lhsT", {4, 5}}, {"rhs", {3, 5}}}, params),
      "matmul: lhsT has shape [4,5] and rhs [3,5] but their first axes (K) must be equal",
      neuronsim::Error);
  CHECK_THROWS_AS(checkShapes(spec, {{"lhsT", {4, 5, 1}}, {"rhs", {4, 5}}}, params),
                  neuronsim::Error);
  CHECK_THROWS_WITH_AS(checkShapes(spec, {{"lhsT", {4, 5}}}, params),
                       "matmul: input rhs is required", neuronsim::Error);
  CHECK_THROWS_AS(checkShapes(spec, {{"lhsT", {4, 5}}, {"rhs", {4, 5}}, {"bias", {5}}}, params),
                  neuronsim::Error);
}

TEST_CASE("matmul: 4096x4096 by 4096x8192 bf16 builds its full tile grid") {
  using namespace neuronsim::kernels;
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  const KernelShapes shapes =
      checkShapes(spec, {{"lhsT", {4096, 4096}}, {"rhs", {4096, 8192}}}, params);
  const auto program = buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{});
  int64_t matmuls = 0;
  for (const auto& inst : program.instructions)
    matmuls += inst.opcode == neuronsim::isa::Opcode::NcMatmul;
  CHECK(matmuls == 32 * 32 * 16);
}
