#pragma once
// One instruction of the simulated ISA (modelled on nki.isa), with its engine and its semaphores.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/access_pattern.h"
#include "isa/heap_optional.h"
#include "isa/note.h"

namespace neuronsim::isa {

/// The instruction streams. Sync is the sequencer with no datapath that triggers DMAs.
enum class Engine : uint8_t { Tensor, Vector, Scalar, GpSimd, Sync };
inline constexpr int kNumEngines = 5;
std::string_view engineName(Engine engine);  // tensor, vector, scalar, gpsimd, sync

/// Operand conventions (srcs order) per opcode:
/// - NcMatmul: srcs {stationary [K parts, M free], moving [K parts, N free]}; dst PSUM
///   [M parts, N free] fp32; dst = stationary^T @ moving, added to dst when `accumulate`.
/// - NcTranspose: srcs {data [P parts, F free]}; dst [F parts, P free]. Tensor (dst PSUM) or
///   Vector (P, F <= 32).
/// - Activation: srcs {data}; dst = act(data * scale + bias); bias optional [P,1];
///   reduceDst optional [P,1] receives the add-reduction of dst's values along the free axis.
/// - TensorTensor: srcs {a, b}; dst = a op0 b.
/// - TensorScalar: srcs {data}; t = data op0 operand0 (operand0 op0 data when reverse0);
///   dst = t op1 operand1 (reverse1 likewise); op1 Bypass skips the second op.
/// - ScalarTensorTensor: srcs {data, tensor}; dst = (data op0 operand0) op1 tensor.
/// - TensorReduce: srcs {data}; op0 in {Add, Max, Min} over the last `reduceAxes` free dims;
///   negated when `negate`; dst keeps the remaining dims.
/// - TensorCopy: srcs {src}; dst = src converted to dst's dtype.
/// - CopyPredicated: srcs {predicate, src}; dst = src where predicate != 0, else unchanged.
/// - Memset: dst = value.
/// - Iota: dst = affine(p, i) (see Affine).
/// - AffineSelect: srcs {data}; dst = (affine(p, i) `cmp` 0) ? data : fill.
/// - DmaCopy: srcs {src}; any two spaces; element counts equal; converts dtype.
/// - DmaTranspose: srcs {src [A parts, B free]}; dst [B parts, A free]; 2- or 4-byte dtypes.
enum class Opcode : uint8_t {
  NcMatmul,
  NcTranspose,
  Activation,
  TensorTensor,
  TensorScalar,
  ScalarTensorTensor,
  TensorReduce,
  TensorCopy,
  CopyPredicated,
  Memset,
  Iota,
  AffineSelect,
  DmaCopy,
  DmaTranspose,
};
inline constexpr int kNumOpcodes = 14;
std::string_view opcodeName(Opcode opcode);  // nc_matmul, tensor_tensor, dma_copy, ...
constexpr bool isDma(Opcode opcode) {
  return opcode == Opcode::DmaCopy || opcode == Opcode::DmaTranspose;
}

/// ALU operations; comparisons give 1.0 or 0.0.
enum class AluOp : uint8_t {
  Bypass,
  Add,
  Subtract,
  Multiply,
  Divide,
  Max,
  Min,
  IsEqual,
  NotEqual,
  IsLt,
  IsLe,
  IsGt,
  IsGe,
};
std::string_view aluOpName(AluOp op);  // bypass, add, subtract, multiply, divide, max, min, ...

/// ScalarE activation functions. Gelu is the erf form; GeluTanh the tanh approximation.
enum class ActFn : uint8_t {
  Copy,
  Relu,
  Sigmoid,
  Tanh,
  Silu,
  Gelu,
  GeluTanh,
  Exp,
  Square,
  Sqrt,
  Rsqrt,
  Reciprocal,
};
std::string_view actFnName(ActFn fn);  // copy, relu, sigmoid, tanh, silu, gelu, gelu_tanh, ...

/// An immediate, or a per-partition [P,1] vector when `vec` is set.
struct ScalarOperand {
  float imm = 0.0f;
  HeapOptional<AccessPattern> vec;
  bool operator==(const ScalarOperand&) const = default;
};

/// affine(p, i) = offset + channelMultiplier * p + sum_j(pattern[j].step * i_j), where p is
/// the partition index relative to dst.partitionStart and i_j runs over pattern[j].num
/// (whose nums must equal dst's dims' nums).
struct Affine {
  std::vector<Dim> pattern;
  int64_t offset = 0;
  int64_t channelMultiplier = 0;
  bool operator==(const Affine&) const = default;
};

/// Proceed once semaphore `sem` >= value.
struct SemWait {
  int32_t sem = 0;
  int64_t value = 0;
  bool operator==(const SemWait&) const = default;
};

}  // namespace neuronsim::isa

NEURONSIM_POOLED_STD_ALLOCATOR(neuronsim::isa::SemWait);

namespace neuronsim::isa {

enum class SignalAt : uint8_t { Read, Complete };

/// Add `delta` to semaphore `sem` when the instruction starts reading (Read) or finishes
/// (Complete). For a DMA, Complete is when the transfer has landed.
struct SemSignal {
  int32_t sem = 0;
  SignalAt at = SignalAt::Complete;
  int64_t delta = 1;
  bool operator==(const SemSignal&) const = default;
};

}  // namespace neuronsim::isa

NEURONSIM_POOLED_STD_ALLOCATOR(neuronsim::isa::SemSignal);

namespace neuronsim::isa {

struct Instruction {
  Opcode opcode = Opcode::TensorCopy;
  Engine engine = Engine::Vector;  ///< the stream it sits in (for a DMA, the trigger)
  int32_t dmaQueue = -1;           ///< DMA only: the queue (0..15) the transfer runs on
  AccessPattern dst;
  std::vector<AccessPattern> srcs;

  AluOp op0 = AluOp::Bypass;
  AluOp op1 = AluOp::Bypass;
  ScalarOperand operand0;
  ScalarOperand operand1;
  bool reverse0 = false;
  bool reverse1 = false;

  ActFn act = ActFn::Copy;
  ScalarOperand scale{1.0f, std::nullopt};
  HeapOptional<AccessPattern> bias;
  HeapOptional<AccessPattern> reduceDst;

  int32_t reduceAxes = 1;
  bool negate = false;
  bool accumulate = false;
  float value = 0.0f;       ///< Memset value; AffineSelect fill
  AluOp cmp = AluOp::IsGe;  ///< AffineSelect comparison against 0
  Affine affine;

  std::vector<SemWait> waits;
  std::vector<SemSignal> signals;
  Note note;  ///< free text from the builder (printed as a trailing comment)

  bool operator==(const Instruction&) const = default;
};

}  // namespace neuronsim::isa
