#pragma once
// Operand and instruction builders shared by the isa test suites.

#include <cstdint>
#include <utility>
#include <vector>

#include "isa/access_pattern.h"
#include "isa/instruction.h"

namespace neuronsim::isa::test {

/// An on-chip operand: partitions [start, start+count), byte `offset`, free `dims`.
inline AccessPattern chip(Space space, int32_t start, int32_t count, int64_t offset,
                          std::vector<Dim> dims, Dtype dtype = Dtype::Fp32) {
  AccessPattern ap;
  ap.space = space;
  ap.dtype = dtype;
  ap.partitionStart = start;
  ap.partitionCount = count;
  ap.offset = offset;
  ap.dims = std::move(dims);
  return ap;
}

/// An SBUF operand with explicit free dims.
inline AccessPattern sb(int32_t start, int32_t count, int64_t offset, std::vector<Dim> dims,
                        Dtype dtype = Dtype::Fp32) {
  return chip(Space::Sbuf, start, count, offset, std::move(dims), dtype);
}

/// A PSUM operand with explicit free dims.
inline AccessPattern ps(int32_t start, int32_t count, int64_t offset, std::vector<Dim> dims,
                        Dtype dtype = Dtype::Fp32) {
  return chip(Space::Psum, start, count, offset, std::move(dims), dtype);
}

/// An HBM view of tensor `tensor`: `rows` rows `rowStep` elements apart from element `offset`.
inline AccessPattern hbmView(int32_t tensor, int32_t rows, int64_t rowStep, int64_t offset,
                             std::vector<Dim> dims, Dtype dtype = Dtype::Fp32) {
  AccessPattern ap;
  ap.space = Space::Hbm;
  ap.dtype = dtype;
  ap.tensor = tensor;
  ap.partitionCount = rows;
  ap.partitionStep = rowStep;
  ap.offset = offset;
  ap.dims = std::move(dims);
  return ap;
}

/// An instruction `op` on `engine` writing `dst` from `srcs` (every other field default).
inline Instruction make(Opcode op, Engine engine, AccessPattern dst,
                        std::vector<AccessPattern> srcs = {}) {
  Instruction inst;
  inst.opcode = op;
  inst.engine = engine;
  inst.dst = std::move(dst);
  inst.srcs = std::move(srcs);
  return inst;
}

}  // namespace neuronsim::isa::test
