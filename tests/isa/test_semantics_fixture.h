#pragma once
// Test helpers for the semantics suites: a small machine, operand builders and plain element
// access.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "isa/dtype.h"
#include "isa/instruction.h"
#include "isa/memory_state.h"
#include "isa/program.h"
#include "isa/semantics.h"
#include "operand_builders.h"

namespace neuronsim::isa::test {

/// 128 partitions but small SBUF/PSUM so each test allocates little.
inline Geometry smallGeometry() {
  Geometry g;
  g.sbufPartitionBytes = 4096;
  g.psumPartitionBytes = 2048;
  return g;
}

/// SBUF [count parts, free contiguous elements] at byte `offset`.
inline AccessPattern sb(int32_t start, int32_t count, int64_t free, int64_t offset = 0,
                        Dtype dtype = Dtype::Fp32) {
  return chip(Space::Sbuf, start, count, offset, {{1, free}}, dtype);
}

/// PSUM [count parts, free contiguous elements] at byte `offset`.
inline AccessPattern ps(int32_t start, int32_t count, int64_t free, int64_t offset = 0,
                        Dtype dtype = Dtype::Fp32) {
  return chip(Space::Psum, start, count, offset, {{1, free}}, dtype);
}

/// Calls f(partitionIndex, elementOffsetInElements) in visiting order, by plain nested loops.
inline void forEachElement(const AccessPattern& ap,
                           const std::function<void(int32_t, int64_t)>& f) {
  std::function<void(int32_t, size_t, int64_t)> walk = [&](int32_t p, size_t d, int64_t off) {
    if (d == ap.dims.size()) {
      f(p, off);
      return;
    }
    for (int64_t i = 0; i < ap.dims[d].num; ++i) walk(p, d + 1, off + i * ap.dims[d].step);
  };
  for (int32_t p = 0; p < ap.partitionCount; ++p) walk(p, 0, 0);
}

/// Writes values (visiting order) into an on-chip operand and marks them written.
inline void put(MemoryState& m, const AccessPattern& ap, const std::vector<float>& values) {
  size_t k = 0;
  const int w = dtypeBytes(ap.dtype);
  forEachElement(ap, [&](int32_t p, int64_t off) {
    const int64_t byte = ap.offset + off * w;
    storeElement(ap.dtype, values.at(k++), m.onChip(ap.space, ap.partitionStart + p, byte));
    m.markWritten(ap.space, ap.partitionStart + p, byte, w);
  });
}

/// Reads an on-chip or HBM operand in visiting order.
inline std::vector<float> get(MemoryState& m, const AccessPattern& ap) {
  std::vector<float> out;
  const int w = dtypeBytes(ap.dtype);
  forEachElement(ap, [&](int32_t p, int64_t off) {
    if (ap.space == Space::Hbm) {
      const int64_t e = ap.offset + p * ap.partitionStep + off;
      out.push_back(loadElement(ap.dtype, m.hbm(ap.tensor).data() + e * w));
    } else {
      out.push_back(
          loadElement(ap.dtype, m.onChip(ap.space, ap.partitionStart + p, ap.offset + off * w)));
    }
  });
  return out;
}

/// Raw bits of one on-chip element.
inline uint32_t bitsAt(MemoryState& m, Space space, int32_t partition, int64_t byte, int bytes) {
  uint32_t b = 0;
  std::memcpy(&b, m.onChip(space, partition, byte), static_cast<size_t>(bytes));
  return b;
}

/// A program with the given HBM tensors and a memory state for it.
struct Machine {
  Program program;
  MemoryState memory;
  explicit Machine(std::vector<TensorDecl> tensors = {})
      : program{std::move(tensors), {}, {}}, memory(program, smallGeometry()) {}
  void run(const Instruction& inst, int64_t index = 0) { execute(inst, index, memory); }
};

}  // namespace neuronsim::isa::test
