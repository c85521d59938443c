// Builder cost against program size: host seconds per instruction of KernelBuilder (automatic
// semaphores, allocation checks, validation) for a synthetic pipelined stream of 10k..1M
// instructions and for max_pooling_3d_backward (kernel 3, stride 1) on growing inputs.
// Near-linear cost shows as a flat microseconds-per-instruction column.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "isa/geometry.h"
#include "isa/size_limits.h"
#include "kernels/builder/kernel_builder.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"

namespace {

using namespace neuronsim;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double cpuSecondsSince(std::clock_t start) {
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

/// A pipelined stream of about `target` instructions: per step, load a [128, 512] block of x
/// into one of four buffers, scale it on Scalar, add the previous block on Vector and store it
/// to y. Blocks walk the whole tensor (wrapping once it reaches the per-tensor element limit),
/// so the HBM interval maps grow with the program.
int64_t buildStream(int64_t target) {
  constexpr int64_t kFree = 512;
  constexpr int kBuffers = 4;
  const int64_t steps = target / 4;
  const int64_t blocks = std::min(steps, isa::kMaxTensorElements / (128 * kFree));
  kernels::KernelBuilder b("stream", isa::Geometry{});
  const kernels::HbmView x = b.input("x", {blocks, 128, kFree}, isa::Dtype::Fp32);
  const kernels::HbmView y = b.output("y", {blocks, 128, kFree}, isa::Dtype::Fp32);
  std::vector<kernels::Tile> in, out;
  for (int i = 0; i < kBuffers; ++i) {
    in.push_back(b.sbuf({128, kFree}, isa::Dtype::Fp32));
    out.push_back(b.sbuf({128, kFree}, isa::Dtype::Fp32));
  }
  for (int64_t s = 0; s < steps; ++s) {
    const int i = static_cast<int>(s % kBuffers);
    const int prev = static_cast<int>((s + kBuffers - 1) % kBuffers);
    b.dmaCopy(in[i], x.select(0, s % blocks));
    b.tensorScalar(out[i], in[i], isa::AluOp::Multiply, 0.5f, isa::AluOp::Bypass, 0.0f,
                   isa::Engine::Scalar);
    b.tensorTensor(out[i], out[i], in[prev], isa::AluOp::Add);
    b.dmaCopy(y.select(0, s % blocks), out[i]);
  }
  return static_cast<int64_t>(b.finish().instructions.size());
}

/// Builds max_pooling_3d_backward, kernel 3 stride 1 padding 1, on input [1, C, D, D, D].
int64_t buildMaxPool(int64_t channels, int64_t depth) {
  const kernels::KernelSpec& spec = kernels::findKernel("max_pooling_3d_backward");
  const kernels::ParamValues params =
      kernels::parseParams(spec, {{"kernel_size", "3"}, {"stride", "1"}, {"padding", "1"}});
  kernels::ShapeMap given{{"input_tensor", {1, channels, depth, depth, depth}}};
  if (spec.deriveShapes) given = spec.deriveShapes(given, params);
  const kernels::KernelShapes shapes = kernels::checkShapes(spec, given, params);
  return static_cast<int64_t>(
      kernels::buildKernel(spec, params, shapes, isa::Dtype::Fp32, isa::Geometry{})
          .instructions.size());
}

template <typename Build>
void report(const std::string& name, Build&& build) {
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpuStart = std::clock();
  const int64_t instructions = build();
  const double cpu = cpuSecondsSince(cpuStart);
  const double wall = secondsSince(start);
  std::printf("%-34s %9lld instructions %8.2f s wall %8.2f s cpu %7.2f us cpu/instruction\n",
              name.c_str(), static_cast<long long>(instructions), wall, cpu,
              1e6 * cpu / instructions);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  // Optional argument: the largest stream size (default 1M instructions).
  const int64_t maxStream = argc > 1 ? std::atoll(argv[1]) : 1000000;
  for (int64_t n : {10000, 30000, 100000, 300000, 1000000})
    if (n <= maxStream) report(fmt::format("stream {}", n), [n] { return buildStream(n); });
  for (int64_t depth : {32, 48, 64, 96})
    report(fmt::format("max_pool_bwd k3s1 [1,256,{}^3]", depth),
           [depth] { return buildMaxPool(256, depth); });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 2;
}
