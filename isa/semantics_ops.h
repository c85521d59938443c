#pragma once
// Internal to the semantics: one function per opcode, and the helpers they share.

#include <cstdint>
#include <string_view>
#include <vector>

#include "isa/instruction.h"
#include "isa/memory_state.h"
#include "isa/semantics_operand.h"

namespace neuronsim::isa::detail {

void execNcMatmul(const Instruction& inst, int64_t index, MemoryState& memory);
/// nc_transpose and dma_transpose: srcs[0] [A parts, B free] -> dst [B parts, A free].
void execTranspose(const Instruction& inst, int64_t index, MemoryState& memory);
/// tensor_copy and dma_copy: srcs[0] -> dst in visiting order, converting dtype.
void execCopy(const Instruction& inst, int64_t index, MemoryState& memory);
void execActivation(const Instruction& inst, int64_t index, MemoryState& memory);
void execTensorTensor(const Instruction& inst, int64_t index, MemoryState& memory);
void execTensorScalar(const Instruction& inst, int64_t index, MemoryState& memory);
void execScalarTensorTensor(const Instruction& inst, int64_t index, MemoryState& memory);
void execTensorReduce(const Instruction& inst, int64_t index, MemoryState& memory);
void execCopyPredicated(const Instruction& inst, int64_t index, MemoryState& memory);
void execMemset(const Instruction& inst, int64_t index, MemoryState& memory);
void execIota(const Instruction& inst, int64_t index, MemoryState& memory);
void execAffineSelect(const Instruction& inst, int64_t index, MemoryState& memory);

/// Throws neuronsim::Error naming `what` when `actual` != `expected`.
void requireCount(std::string_view what, int64_t actual, int64_t expected);
/// The source operand srcs[i], or an Error when the instruction has fewer sources.
const AccessPattern& source(const Instruction& inst, size_t i);
/// Reads an on-chip/HBM operand fully (checking initialization) into fp32 values.
std::vector<float> readFloats(MemoryState& memory, const AccessPattern& ap, int64_t index,
                              std::string_view name);
/// One fp32 value per partition: the immediate, or element 0 of each partition of `vec`.
std::vector<float> perPartition(const ScalarOperand& s, int64_t partitions, MemoryState& memory,
                                int64_t index, std::string_view name);
/// Copies src [A parts, B free] to dst [B parts, A free]; bit-exact when the dtypes match.
void transposeInto(const OperandRef& src, OperandRef& dst);
/// Copies src to dst in visiting order; bit-exact when the dtypes match, else converted.
void copyInto(const OperandRef& src, OperandRef& dst);

}  // namespace neuronsim::isa::detail
