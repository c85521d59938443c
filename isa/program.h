#pragma once
// A complete program: HBM tensors, semaphores and the instructions in builder order.

#include <cstdint>
#include <string>
#include <vector>

#include "isa/huge_page_allocator.h"
#include "isa/instruction.h"

namespace neuronsim::isa {

enum class TensorKind : uint8_t { Input, Output, Internal };

struct TensorDecl {
  std::string name;
  std::vector<int64_t> shape;
  Dtype dtype = Dtype::Fp32;
  TensorKind kind = TensorKind::Input;
  int64_t numElements() const;
  bool operator==(const TensorDecl&) const = default;
};

/// Instructions are kept in builder order: the interpreter runs them in that order; the
/// timed model splits them into one in-order stream per engine (Instruction::engine) and
/// per DMA queue (Instruction::dmaQueue). Semaphores start at 0. The instructions sit on 2 MiB
/// pages once they fill one: the decoder reads five streams of them interleaved.
struct Program {
  std::vector<TensorDecl> tensors;
  std::vector<std::string> semaphores;
  LargeVector<Instruction> instructions;

  /// Index of the tensor named `name`, or -1.
  int32_t tensorIndex(const std::string& name) const;
  bool operator==(const Program&) const = default;
};

}  // namespace neuronsim::isa
