// ScalarE semantics: each activation function at a few points, scale/bias, the add reduction.
#include <doctest/doctest.h>

#include <cmath>

#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

std::vector<float> activate(ActFn fn, const std::vector<float>& x) {
  Machine mc;
  const auto n = static_cast<int64_t>(x.size());
  put(mc.memory, sb(0, 1, n, 0), x);
  Instruction inst = make(Opcode::Activation, Engine::Scalar, sb(0, 1, n, 256), {sb(0, 1, n, 0)});
  inst.act = fn;
  mc.run(inst);
  return get(mc.memory, sb(0, 1, n, 256));
}

}  // namespace

TEST_CASE("activation functions against reference values") {
  struct Row {
    ActFn fn;
    std::vector<float> x;
    std::vector<double> expected;  // from the closed forms, in double
  };
  const Row rows[] = {
      {ActFn::Copy, {-1.5f, 7.0f}, {-1.5, 7.0}},
      {ActFn::Relu, {-2.0f, 0.0f, 3.0f}, {0.0, 0.0, 3.0}},
      {ActFn::Sigmoid, {0.0f, 2.0f, -2.0f}, {0.5, 0.8807970779778823, 0.11920292202211755}},
      {ActFn::Tanh, {0.5f, -0.5f, 0.0f}, {0.46211715726000974, -0.46211715726000974, 0.0}},
      {ActFn::Silu, {1.0f, -2.0f, 0.0f}, {0.7310585786300049, -0.2384058440442351, 0.0}},
      {ActFn::Gelu, {1.0f, -1.0f, 0.0f}, {0.8413447460685429, -0.15865525393145707, 0.0}},
      {ActFn::GeluTanh,
       {1.0f, -1.0f, 2.0f},
       {0.8411919906082768, -0.15880800939172324, 1.9545976940871754}},
      {ActFn::Exp, {1.0f, -1.0f, 0.0f}, {2.718281828459045, 0.36787944117144233, 1.0}},
      {ActFn::Square, {-3.0f, 0.5f}, {9.0, 0.25}},
      {ActFn::Sqrt, {2.0f, 4.0f}, {1.4142135623730951, 2.0}},
      {ActFn::Rsqrt, {4.0f, 0.25f}, {0.5, 2.0}},
      {ActFn::Reciprocal, {-4.0f, 3.0f}, {-0.25, 0.3333333333333333}},
  };
  for (const Row& row : rows) {
    CAPTURE(actFnName(row.fn));
    const std::vector<float> y = activate(row.fn, row.x);
    REQUIRE(y.size() == row.expected.size());
    for (size_t i = 0; i < y.size(); ++i)
      CHECK(y[i] == doctest::Approx(row.expected[i]).epsilon(2e-6));
  }
}

TEST_CASE(
    "activation edge values: relu keeps NaN, sqrt of negative is NaN, reciprocal of 0 is Inf") {
  const float nan = std::nanf("");
  CHECK(std::isnan(activate(ActFn::Relu, {nan})[0]));
  CHECK(std::isnan(activate(ActFn::Sqrt, {-1.0f})[0]));
  CHECK(activate(ActFn::Reciprocal, {0.0f})[0] == INFINITY);
  CHECK(activate(ActFn::Sigmoid, {-200.0f})[0] == 0.0f);
  CHECK(activate(ActFn::Exp, {100.0f})[0] == INFINITY);
}

TEST_CASE("activation: per-partition scale and bias, with an add reduction") {
  Machine mc;
  put(mc.memory, sb(0, 2, 2, 0), {1, 2, 3, 4});
  put(mc.memory, sb(0, 2, 1, 64), {2, -1});     // scale
  put(mc.memory, sb(0, 2, 1, 128), {0.5f, 1});  // bias
  Instruction inst = make(Opcode::Activation, Engine::Scalar, sb(0, 2, 2, 256), {sb(0, 2, 2, 0)});
  inst.scale.vec = sb(0, 2, 1, 64);
  inst.bias = sb(0, 2, 1, 128);
  inst.reduceDst = sb(0, 2, 1, 512);
  SUBCASE("copy") {
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 256)) == std::vector<float>{2.5f, 4.5f, -2, -3});
    CHECK(get(mc.memory, sb(0, 2, 1, 512)) == std::vector<float>{7, -5});
  }
  SUBCASE("relu; the reduction sums the activated values") {
    inst.act = ActFn::Relu;
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 256)) == std::vector<float>{2.5f, 4.5f, 0, 0});
    CHECK(get(mc.memory, sb(0, 2, 1, 512)) == std::vector<float>{7, 0});
  }
  SUBCASE("immediate scale") {
    inst.scale = ScalarOperand{3.0f, std::nullopt};
    mc.run(inst);
    CHECK(get(mc.memory, sb(0, 2, 2, 256)) == std::vector<float>{3.5f, 6.5f, 10, 13});
  }
  CHECK(mc.memory.uninitializedReads().empty());
}

TEST_CASE("activation: the reduction adds fp32 values before they are rounded to dst's dtype") {
  Machine mc;
  put(mc.memory, sb(0, 1, 2, 0), {1, 1});
  Instruction inst =
      make(Opcode::Activation, Engine::Scalar, sb(0, 1, 2, 64, Dtype::Bf16), {sb(0, 1, 2, 0)});
  inst.act = ActFn::Exp;
  inst.reduceDst = sb(0, 1, 1, 128);
  mc.run(inst);
  CHECK(get(mc.memory, sb(0, 1, 2, 64, Dtype::Bf16)) == std::vector<float>{2.71875f, 2.71875f});
  const float e = std::exp(1.0f);
  CHECK(get(mc.memory, sb(0, 1, 1, 128))[0] == e + e);  // not 5.4375, the sum of the rounded values
}
