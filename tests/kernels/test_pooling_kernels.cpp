// The four pooling kernels against their references on a table of shapes, both dtypes.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_pooling_check.h"

using neuronsim::isa::Dtype;
using neuronsim::kernels::pooling_testing::checkPoolCase;
using neuronsim::kernels::pooling_testing::PoolCase;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

Params window(const std::string& k, const std::string& s, const std::string& p,
              const std::string& dataFormat = "NCDHW", const std::string& outputFormat = "") {
  Params params{{"kernel_size", k}, {"padding", p}, {"data_format", dataFormat}};
  if (!s.empty()) params.push_back({"stride", s});
  if (!outputFormat.empty()) params.push_back({"output_format", outputFormat});
  return params;
}

/// Shapes every pooling kernel is checked on (inputs in data_format layout).
const std::vector<PoolCase>& poolCases() {
  static const std::vector<PoolCase> cases = {
      {"channels 1", {1, 1, 4, 4, 4}, window("2", "", "0")},
      {"default-like", {2, 16, 8, 8, 8}, window("2", "", "0")},
      {"channels 130", {1, 130, 4, 4, 4}, window("2", "", "0")},
      {"B*C=150, k3 s2 p1", {3, 50, 5, 6, 7}, window("3", "2", "1")},
      {"stride < kernel, uneven padding", {1, 4, 7, 9, 8}, window("3,2,3", "1,1,2", "1,0,1")},
      {"stride > kernel", {2, 3, 9, 10, 11}, window("2", "3", "0,1,1")},
      {"mixed per axis", {1, 5, 6, 7, 8}, window("2,3,1", "3,1,2", "1,1,0")},
      {"NDHWC", {2, 5, 6, 7, 6}, window("2", "", "0", "NDHWC")},
      {"NDHWC -> NCDHW", {2, 5, 6, 7, 6}, window("3", "2", "1", "NDHWC", "NCDHW")},
      {"NCDHW -> NDHWC, C=70", {1, 70, 4, 5, 6}, window("2", "1", "1", "NCDHW", "NDHWC")},
      {"NDHWC C=130", {1, 3, 4, 5, 130}, window("2", "", "0", "NDHWC")},
      {"NDHWC B*C=150 -> NCDHW", {3, 4, 4, 4, 50}, window("2", "1", "1", "NDHWC", "NCDHW")},
      {"identity k1", {1, 3, 3, 3, 3}, window("1", "", "0")},
      {"k4 s4 p2", {1, 2, 8, 8, 8}, window("4", "", "2")},
      {"W extent 1", {1, 2, 4, 5, 1}, window("2,2,1", "", "0")},
      {"odd k3 s(2,1,2) p1", {2, 7, 11, 3, 5}, window("3", "2,1,2", "1")},
      {"stride 5 gaps", {1, 3, 10, 10, 10}, window("2", "5", "0")},
      {"window = whole input", {1, 4, 3, 4, 5}, window("3,4,5", "1", "0")},
      {"same k3 s1 p1", {2, 9, 6, 6, 6}, window("3", "1", "1")},
      {"k2 s2 p1", {1, 16, 7, 7, 7}, window("2", "", "1")},
      {"NDHWC B*C=160", {4, 4, 4, 4, 40}, window("2", "", "0", "NDHWC", "NDHWC")},
      {"k2 s1 p0 long W", {1, 2, 2, 3, 40}, window("2", "1", "0")},
  };
  return cases;
}

void checkAll(const std::string& kernel, Dtype dtype) {
  const auto machine = neuronsim::sim::loadMachine("trn2");
  uint64_t seed = 1;
  for (const PoolCase& c : poolCases()) checkPoolCase(kernel, c, dtype, machine, seed++);
}

/// Planes larger than the (reduced) SBUF: D chunked (8 KiB), then D and H chunked (3 KiB).
void checkChunked(const std::string& kernel, Dtype dtype) {
  for (int64_t bytes : {8 * 1024, 3 * 1024}) {
    auto machine = neuronsim::sim::loadMachine("trn2");
    machine.geometry.sbufPartitionBytes = bytes;
    checkPoolCase(kernel, {"chunked k2", {1, 3, 12, 12, 12}, window("2", "", "0")}, dtype, machine,
                  7);
    checkPoolCase(
        kernel,
        {"chunked k3 s2 p1 NDHWC", {2, 11, 13, 12, 3}, window("3", "2", "1", "NDHWC", "NCDHW")},
        dtype, machine, 8);
    checkPoolCase(kernel, {"chunked k3 s1 p1", {1, 2, 10, 14, 9}, window("3", "1", "1")}, dtype,
                  machine, 9);
    checkPoolCase(kernel, {"chunked k2 s3", {1, 2, 14, 10, 9}, window("2", "3", "1,0,1")}, dtype,
                  machine, 10);
  }
}

}  // namespace

TEST_CASE("avg_pooling_3d_backward fp32: shape table") {
  checkAll("avg_pooling_3d_backward", Dtype::Fp32);
}
TEST_CASE("avg_pooling_3d_backward bf16: shape table") {
  checkAll("avg_pooling_3d_backward", Dtype::Bf16);
}
TEST_CASE("avg_pooling_3d_backward: planes larger than SBUF") {
  checkChunked("avg_pooling_3d_backward", Dtype::Fp32);
  checkChunked("avg_pooling_3d_backward", Dtype::Bf16);
}

TEST_CASE("max_pooling_3d_backward fp32: shape table") {
  checkAll("max_pooling_3d_backward", Dtype::Fp32);
}
TEST_CASE("max_pooling_3d_backward bf16: shape table") {
  checkAll("max_pooling_3d_backward", Dtype::Bf16);
}
TEST_CASE("max_pooling_3d_backward: planes larger than SBUF") {
  checkChunked("max_pooling_3d_backward", Dtype::Fp32);
  checkChunked("max_pooling_3d_backward", Dtype::Bf16);
}

TEST_CASE("avg_pooling_3d fp32: shape table") {
  checkAll("avg_pooling_3d", Dtype::Fp32);
}
TEST_CASE("avg_pooling_3d bf16: shape table") {
  checkAll("avg_pooling_3d", Dtype::Bf16);
}
TEST_CASE("avg_pooling_3d: planes larger than SBUF") {
  checkChunked("avg_pooling_3d", Dtype::Fp32);
  checkChunked("avg_pooling_3d", Dtype::Bf16);
}

TEST_CASE("max_pooling_3d fp32: shape table") {
  checkAll("max_pooling_3d", Dtype::Fp32);
}
TEST_CASE("max_pooling_3d bf16: shape table") {
  checkAll("max_pooling_3d", Dtype::Bf16);
}
TEST_CASE("max_pooling_3d: planes larger than SBUF") {
  checkChunked("max_pooling_3d", Dtype::Fp32);
  checkChunked("max_pooling_3d", Dtype::Bf16);
}

TEST_CASE("pooling: planes whose steps exceed int16 and rows whose counts exceed uint16") {
  const auto machine = neuronsim::sim::loadMachine("trn2");
  for (const std::string kernel :
       {"avg_pooling_3d_backward", "max_pooling_3d_backward", "avg_pooling_3d", "max_pooling_3d"}) {
    checkPoolCase(kernel, {"H*W = 40000", {1, 2, 3, 200, 200}, window("2", "", "0")}, Dtype::Fp32,
                  machine, 11);
    checkPoolCase(kernel, {"W = 70000", {1, 1, 1, 1, 70000}, window("1,1,3", "1,1,2", "0,0,1")},
                  Dtype::Fp32, machine, 12);
  }
}

TEST_CASE("max pooling kernels: NaN and Inf inputs follow PyTorch") {
  // A window holding a NaN has maximum NaN and its gradient goes to its last NaN.
  auto machine = neuronsim::sim::loadMachine("trn2");
  const std::vector<PoolCase> cases = {
      {"k3 s1 p1", {1, 3, 6, 5, 7}, window("3", "1", "1")},
      {"k2 s2", {2, 5, 6, 6, 6}, window("2", "", "0")},
      {"k3 s2 p1 NDHWC -> NCDHW", {2, 5, 7, 6, 9}, window("3", "2", "1", "NDHWC", "NCDHW")},
      {"B*C=150 k(2,3,1) s(1,2,1)", {3, 50, 4, 5, 6}, window("2,3,1", "1,2,1", "1,1,0")},
  };
  uint64_t seed = 40;
  for (const std::string kernel : {"max_pooling_3d_backward", "max_pooling_3d"}) {
    for (const PoolCase& c : cases) {
      for (Dtype dtype : {Dtype::Fp32, Dtype::Bf16})
        checkPoolCase(kernel, c, dtype, machine, ++seed, 8);
    }
  }
  machine.geometry.sbufPartitionBytes = 3 * 1024;
  checkPoolCase("max_pooling_3d_backward",
                {"chunked k3 s1 p1", {1, 2, 10, 14, 9}, window("3", "1", "1")}, Dtype::Fp32,
                machine, 50, 6);
}
