// Name tables of engines, opcodes, ALU operations and activation functions.
#include "isa/instruction.h"

#include <array>

namespace neuronsim::isa {

namespace {

constexpr std::array<std::string_view, kNumEngines> kEngineNames{"tensor", "vector", "scalar",
                                                                 "gpsimd", "sync"};

constexpr std::array<std::string_view, kNumOpcodes> kOpcodeNames{
    "nc_matmul",     "nc_transpose",  "activation",
    "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor",
    "tensor_reduce", "tensor_copy",   "tensor_copy_predicated",
    "memset",        "iota",          "affine_select",
    "dma_copy",      "dma_transpose"};

constexpr std::array<std::string_view, 13> kAluNames{
    "bypass",   "add",       "subtract", "multiply", "divide", "max",  "min",
    "is_equal", "not_equal", "is_lt",    "is_le",    "is_gt",  "is_ge"};

constexpr std::array<std::string_view, 12> kActNames{"copy",   "relu", "sigmoid",   "tanh",
                                                     "silu",   "gelu", "gelu_tanh", "exp",
                                                     "square", "sqrt", "rsqrt",     "reciprocal"};

template <typename Table>
std::string_view lookup(const Table& table, size_t index) {
  return index < table.size() ? table[index] : std::string_view("?");
}

}  // namespace

std::string_view engineName(Engine engine) {
  return lookup(kEngineNames, static_cast<size_t>(engine));
}

std::string_view opcodeName(Opcode opcode) {
  return lookup(kOpcodeNames, static_cast<size_t>(opcode));
}

std::string_view aluOpName(AluOp op) {
  return lookup(kAluNames, static_cast<size_t>(op));
}

std::string_view actFnName(ActFn fn) {
  return lookup(kActNames, static_cast<size_t>(fn));
}

}  // namespace neuronsim::isa
