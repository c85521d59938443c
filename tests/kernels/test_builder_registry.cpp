// Registry, parameter parsing, views, generated inputs and the run harness.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "isa/error.h"
#include "kernels/builder/kernel_builder.h"
#include "kernels/harness/progress.h"
#include "kernels/harness/run_files.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/registry.h"
#include "sim/machine_config.h"

using neuronsim::Error;
using neuronsim::isa::Dim;
using neuronsim::isa::Dtype;
using namespace neuronsim::kernels;

namespace {

KernelSpec toySpec() {
  KernelSpec spec;
  spec.name = "toy";
  spec.params = {{"kernel_size", ParamType::Int3, "2", "window", {}},
                 {"padding", ParamType::Int6, "0", "pads", {}},
                 {"compute_dx", ParamType::Bool, "true", "dx", {}},
                 {"data_format", ParamType::Enum, "NCDHW", "layout", {"NCDHW", "NDHWC"}},
                 {"stride", ParamType::Int3, "", "step", {}},
                 {"count", ParamType::Int, "5", "n", {}}};
  return spec;
}

}  // namespace

TEST_CASE("registry: parameters parse with defaults, broadcast and typed getters") {
  const KernelSpec spec = toySpec();
  const ParamValues d = parseParams(spec, {});
  CHECK(d.getInt3("kernel_size") == std::array<int64_t, 3>{2, 2, 2});
  CHECK(d.getInt6("padding") == std::array<int64_t, 6>{0, 0, 0, 0, 0, 0});
  CHECK(d.getBool("compute_dx"));
  CHECK(d.getString("data_format") == "NCDHW");
  CHECK_FALSE(d.has("stride"));
  CHECK(d.getInt("count") == 5);

  const ParamValues p = parseParams(spec, {{"kernel_size", "2,3,4"},
                                           {"padding", "1,2,3"},
                                           {"compute_dx", "false"},
                                           {"data_format", "NDHWC"},
                                           {"stride", "3"},
                                           {"count", "-7"}});
  CHECK(p.getInt3("kernel_size") == std::array<int64_t, 3>{2, 3, 4});
  CHECK(p.getInt6("padding") == std::array<int64_t, 6>{1, 1, 2, 2, 3, 3});
  CHECK_FALSE(p.getBool("compute_dx"));
  CHECK(p.getString("data_format") == "NDHWC");
  CHECK(p.getInt3("stride") == std::array<int64_t, 3>{3, 3, 3});
  CHECK(p.getInt("count") == -7);
  CHECK(parseParams(spec, {{"padding", "1,2,3,4,5,6"}}).getInt6("padding") ==
        std::array<int64_t, 6>{1, 2, 3, 4, 5, 6});
  CHECK(parseParams(spec, {{"kernel_size", "(1, 2, 3)"}}).getInt3("kernel_size") ==
        std::array<int64_t, 3>{1, 2, 3});
}

TEST_CASE("registry: schedule parameters default to auto, which the kernel resolves") {
  KernelSpec spec = toySpec();
  ParamSpec tile{"tile", ParamType::Int, kAuto, "tile size", {}};
  tile.schedule = true;
  ParamSpec engine{"engine", ParamType::Enum, kAuto, "engine", {kAuto, "vector", "scalar"}};
  engine.schedule = true;
  spec.params.push_back(tile);
  spec.params.push_back(engine);
  const ParamValues d = parseParams(spec, {});
  CHECK_FALSE(d.has("tile"));
  CHECK(d.intOr("tile", 64) == 64);
  CHECK(d.getString("engine") == kAuto);  // an enum with an auto choice keeps the text
  const ParamValues p = parseParams(spec, {{"tile", "256"}, {"engine", "scalar"}});
  CHECK(p.intOr("tile", 64) == 256);
  CHECK(p.getString("engine") == "scalar");
  CHECK_FALSE(parseParams(spec, {{"tile", "256"}, {"tile", "auto"}}).has("tile"));
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"tile", "big"}}),
                       "toy: parameter tile takes integers or auto, not 'big'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"count", "auto"}}),
                       "toy: parameter count takes integers, not 'auto'", Error);
  const auto schedule = scheduleParams(spec);
  REQUIRE(schedule.size() == 2);
  CHECK(schedule[0]->name == "tile");
  CHECK(schedule[1]->name == "engine");
}

TEST_CASE("registry: parameter errors name the kernel, the parameter and the rule") {
  const KernelSpec spec = toySpec();
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"kernel_size", "2,2"}}),
                       "toy: parameter kernel_size takes 1 or 3 integers, not '2,2'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"padding", "1,2,3,4"}}),
                       "toy: parameter padding takes 1, 3 or 6 integers, not '1,2,3,4'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"count", "x"}}),
                       "toy: parameter count takes integers, not 'x'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"compute_dx", "maybe"}}),
                       "toy: parameter compute_dx takes true or false, not 'maybe'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"data_format", "NHWC"}}),
                       "toy: parameter data_format takes one of NCDHW, NDHWC, not 'NHWC'", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"dilation", "1"}}),
                       "toy: unknown parameter dilation (neuronsim list toy lists them)", Error);
  CHECK_THROWS_WITH_AS(parseParams(spec, {{"stide", "1"}}),
                       "toy: unknown parameter stide (did you mean stride?) (neuronsim list toy "
                       "lists them)",
                       Error);
  CHECK_THROWS_AS(parseParams(spec, {}).getInt("stride"), Error);
  CHECK(flagName("compute_dx") == "compute-dx");
}

TEST_CASE("registry: lookup and the matmul entry") {
  CHECK_THROWS_AS(findKernel("conv9d"), Error);
  const KernelSpec& m = findKernel("matmul");
  CHECK(m.inputs.size() == 2);
  CHECK(m.fp32Outputs);
  for (const KernelSpec& spec : kernelRegistry()) {
    INFO(spec.name);
    CHECK(!spec.description.empty());
    CHECK(spec.build != nullptr);
    CHECK(spec.reference != nullptr);
    CHECK(spec.inferShapes != nullptr);
    CHECK_NOTHROW(spec.inferShapes(spec.defaultShapes, parseParams(spec, {})));
  }
}

TEST_CASE("run files: assignments") {
  CHECK(splitAssignment("a=b=c", "--x") == std::pair<std::string, std::string>{"a", "b=c"});
  CHECK_THROWS_AS(splitAssignment("=b", "--x"), Error);
}

TEST_CASE("views: HBM slicing, splitting and permuting give the expected access patterns") {
  KernelBuilder b("v", neuronsim::isa::Geometry{});
  const HbmView t = b.input("t", {6, 10, 8}, Dtype::Fp32);
  auto ap = t.slice(1, 2, 9, 3).select(2, 5).ap();  // rows 0..5 step 80, cols 2,5,8 at element 5
  CHECK(ap.partitionCount == 6);
  CHECK(ap.partitionStep == 80);
  CHECK(ap.offset == 2 * 8 + 5);
  CHECK(ap.dims == std::vector<Dim>{{24, 3}});
  auto whole = t.ap();  // contiguous free dims compact into one
  CHECK(whole.dims == std::vector<Dim>{{1, 80}});
  auto perm = t.permute({2, 0, 1}).ap();  // [8, 6, 10]
  CHECK(perm.partitionCount == 8);
  CHECK(perm.partitionStep == 1);
  CHECK(perm.dims == std::vector<Dim>{{8, 60}});      // (i*80 + j*8) walks one dim of step 8
  auto split = t.merge(0, 1).split(0, {3, 20}).ap();  // [3, 20, 8]
  CHECK(split.partitionCount == 3);
  CHECK(split.partitionStep == 160);
  CHECK(split.dims == std::vector<Dim>{{1, 160}});
  CHECK(t.reshape({48, 10}).ap().partitionStep == 10);
  CHECK_THROWS_AS(t.slice(0, 0, 7), Error);
  CHECK_THROWS_AS(t.split(1, {3, 4}), Error);
  CHECK_THROWS_AS(t.slice(1, 0, 10, 2).merge(1, 2), Error);
  CHECK_THROWS_AS(t.permute({0, 0, 1}), Error);
}

TEST_CASE("views: tiles, partition slices and broadcast") {
  KernelBuilder b("v", neuronsim::isa::Geometry{});
  b.sbuf({128, 16}, Dtype::Fp32);
  const Tile t = b.sbuf({64, 4, 8}, Dtype::Bf16, "t");
  CHECK(t.baseBytes() == 64);
  auto ap = t.partitionSlice(32, 32).slice(1, 2, 8, 2).ap();
  CHECK(ap.partitionStart == 32);
  CHECK(ap.partitionCount == 32);
  CHECK(ap.offset == 64 + 2 * 2);
  CHECK(ap.dims == std::vector<Dim>{{8, 4}, {2, 3}});
  auto bc = t.select(0, 1).broadcast(0, 5).ap();
  CHECK(bc.dims == std::vector<Dim>{{0, 5}, {1, 8}});
  CHECK_THROWS_AS(t.partitionSlice(60, 8), Error);
}

TEST_CASE("harness: generated inputs follow the documented SplitMix64 + Box-Muller recipe") {
  // Values from an independent Python implementation of docs/kernels.md.
  const auto a = normalValues({5}, 0, 0);
  CHECK(a == std::vector<float>{-0.3250487148761749f, -0.32465338706970215f, -1.0713305473327637f,
                                -1.2314294576644897f, 0.6074556708335876f});
  const auto b = normalValues({3}, 42, 1);
  CHECK(b == std::vector<float>{1.8446580171585083f, 0.953707754611969f, -2.455570697784424f});
  const auto many = normalValues({100000}, 7, 0);
  double sum = 0, sq = 0;
  for (float v : many) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  CHECK(std::fabs(sum / many.size()) < 0.02);
  CHECK(std::fabs(sq / many.size() - 1.0) < 0.02);
}

TEST_CASE("harness: normalized error and tolerance") {
  HostTensor ref{{3}, {0.5f, -4.0f, 2.0f}};
  HostTensor out{{3}, {0.5f, -4.04f, 2.0f}};
  CHECK(normalizedError(out, ref) == doctest::Approx(0.01).epsilon(1e-4));
  HostTensor small{{2}, {0.1f, 0.2f}};
  HostTensor smallOut{{2}, {0.1f, 0.25f}};
  CHECK(normalizedError(smallOut, small) == doctest::Approx(0.05).epsilon(1e-4));  // divided by 1
  CHECK(std::isinf(normalizedError(HostTensor{{2}, {0.1f, NAN}}, small)));
  CHECK(std::isinf(normalizedError(HostTensor{{1, 2}, {0.1f, 0.2f}}, small)));
  CHECK(tolerance(Dtype::Fp32) == 1e-4);
  CHECK(tolerance(Dtype::Bf16) == 2e-2);
}

TEST_CASE("harness: bf16 runs store inputs in bf16 and matmul outputs in fp32") {
  const KernelSpec& spec = findKernel("matmul");
  const ParamValues params = parseParams(spec, {});
  const KernelShapes shapes = checkShapes(spec, {{"lhsT", {3, 2}}, {"rhs", {3, 4}}}, params);
  const auto program = buildKernel(spec, params, shapes, Dtype::Bf16, neuronsim::isa::Geometry{});
  CHECK(program.tensors.at(program.tensorIndex("lhsT")).dtype == Dtype::Bf16);
  CHECK(program.tensors.at(program.tensorIndex("out")).dtype == Dtype::Fp32);
  CHECK(minimumHbmBytes(spec, shapes, Dtype::Bf16, params) == (6 + 12) * 2 + 8 * 4);
  // An input value that is not a bf16 is rounded on load: 1 + 2^-10 becomes 1.
  HostTensors inputs{{"lhsT", {{1, 1}, {1.0f + 1.0f / 1024}}}, {"rhs", {{1, 1}, {1.0f}}}};
  RunOptions options;
  options.dtype = Dtype::Bf16;
  options.mode = RunMode::Interpret;
  const auto run = runKernel(spec, params, inputs, neuronsim::sim::loadMachine("trn2"), options);
  CHECK(run.outputs.at("out").values == std::vector<float>{1.0f});
}

TEST_CASE("harness: progress lines appear only for phases that run long") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  {
    ProgressMonitor monitor(out, 0.3, 10.0);
    monitor.phase("quick phase");
    monitor.done();
    monitor.phase("slow phase");
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    monitor.done();
  }
  std::rewind(out);
  char buffer[256] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, out);
  std::fclose(out);
  const std::string text(buffer, n);
  CHECK(text.find("neuronsim: slow phase") != std::string::npos);
  CHECK(text.find("quick phase") == std::string::npos);
}

TEST_CASE("buildKernel refuses a machine with fewer partitions or a smaller PE array") {
  KernelSpec spec;
  spec.name = "k";
  spec.inputs = {{"x", "input"}};
  spec.outputs = {{"y", "output"}};
  int built = 0;
  spec.build = [&](KernelBuilder&, const KernelArgs&) { ++built; };
  const ParamValues params;
  KernelShapes shapes;
  shapes.inputs = {{"x", {4, 4}}};
  shapes.outputs = {{"y", {4, 4}}};
  neuronsim::isa::Geometry few;
  few.partitions = 64;
  neuronsim::isa::Geometry narrow;  // 128 partitions, a 128x32 PE array
  narrow.peCols = 32;
  struct Case {
    neuronsim::isa::Geometry geometry;
    int32_t refusedAt;  ///< a minPartitions the machine is refused at; half of it is accepted
    const char* error;
  };
  for (const Case& c :
       {Case{few, 128,
             "k is written for at least 128 partitions; the machine has 64 "
             "(--set partitions)"},
        Case{narrow, 64,
             "k is written for a PE array of at least 64x64; the machine's is 128x32 "
             "(--set pe_rows, pe_cols)"}}) {
    CAPTURE(c.error);
    const int before = built;
    spec.minPartitions = c.refusedAt;
    CHECK_THROWS_WITH_AS(buildKernel(spec, params, shapes, Dtype::Fp32, c.geometry), c.error,
                         Error);
    CHECK(built == before);
    spec.minPartitions = c.refusedAt / 2;
    CHECK_NOTHROW(buildKernel(spec, params, shapes, Dtype::Fp32, c.geometry));
    CHECK(built == before + 1);
  }
}
