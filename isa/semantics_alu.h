#pragma once
// Internal to the semantics: the fp32 ALU operations and activation functions, inlined for hot
// loops.

#include <cmath>

#include "isa/instruction.h"

namespace neuronsim::isa::detail {

/// a op b in fp32. Bypass passes `a` through. Max/Min propagate NaN (assumption: as NumPy's
/// maximum/minimum in NKI's own simulator, S1, so a never-written input stays visible).
/// Comparisons give 1.0f or 0.0f with IEEE NaN rules; Divide by zero follows IEEE.
inline float applyAlu(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::Bypass:
      return a;
    case AluOp::Add:
      return a + b;
    case AluOp::Subtract:
      return a - b;
    case AluOp::Multiply:
      return a * b;
    case AluOp::Divide:
      return a / b;
    case AluOp::Max:
      return (std::isnan(a) || std::isnan(b)) ? a + b : (a < b ? b : a);
    case AluOp::Min:
      return (std::isnan(a) || std::isnan(b)) ? a + b : (b < a ? b : a);
    case AluOp::IsEqual:
      return a == b ? 1.0f : 0.0f;
    case AluOp::NotEqual:
      return a != b ? 1.0f : 0.0f;
    case AluOp::IsLt:
      return a < b ? 1.0f : 0.0f;
    case AluOp::IsLe:
      return a <= b ? 1.0f : 0.0f;
    case AluOp::IsGt:
      return a > b ? 1.0f : 0.0f;
    case AluOp::IsGe:
      return a >= b ? 1.0f : 0.0f;
  }
  return a;
}

/// The activation function applied to x, in fp32 (float overloads of <cmath>).
inline float applyAct(ActFn fn, float x) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  switch (fn) {
    case ActFn::Copy:
      return x;
    case ActFn::Relu:
      return x < 0.0f ? 0.0f : x;
    case ActFn::Sigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case ActFn::Tanh:
      return std::tanh(x);
    case ActFn::Silu:
      return x * (1.0f / (1.0f + std::exp(-x)));
    case ActFn::Gelu:
      return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
    case ActFn::GeluTanh:
      return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
    case ActFn::Exp:
      return std::exp(x);
    case ActFn::Square:
      return x * x;
    case ActFn::Sqrt:
      return std::sqrt(x);
    case ActFn::Rsqrt:
      return 1.0f / std::sqrt(x);
    case ActFn::Reciprocal:
      return 1.0f / x;
  }
  return x;
}

}  // namespace neuronsim::isa::detail
