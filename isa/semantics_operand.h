#pragma once
// Internal to the semantics: one operand resolved to element addresses once per instruction.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "isa/access_pattern.h"
#include "isa/memory_state.h"

namespace neuronsim::isa::detail {

/// An operand's elements in visiting order (partition-major, then dims row-major), resolved
/// to byte addresses: element (p, i) is at partitionBase(p) + freeOffset(i). Bounds are
/// checked once at construction (throws neuronsim::Error).
class OperandRef {
 public:
  OperandRef(MemoryState& memory, const AccessPattern& ap);

  const AccessPattern& pattern() const { return ap_; }
  Dtype dtype() const { return ap_.dtype; }
  int elementBytes() const { return bytes_; }
  /// Number of partitions (rows) and elements per partition.
  int64_t partitions() const { return static_cast<int64_t>(bases_.size()); }
  int64_t freeSize() const { return static_cast<int64_t>(freeOffsets_.size()); }
  int64_t size() const { return partitions() * freeSize(); }
  std::byte* element(int64_t p, int64_t i) const { return bases_[p] + freeOffsets_[i]; }

  /// All elements as fp32, in visiting order.
  std::vector<float> loadFloats() const;
  /// All elements' raw bytes, in visiting order (size() * elementBytes()).
  std::vector<std::byte> loadRaw() const;
  /// Stores values[k] (k in visiting order) rounded to the dtype, and marks them written.
  void storeFloats(const float* values);
  /// Stores raw elements (same dtype) in visiting order, and marks them written.
  void storeRaw(const std::byte* raw);
  /// Stores one element and marks it written.
  void storeOne(int64_t p, int64_t i, float value);
  /// Copies one raw element (same dtype) and marks it written.
  void storeRawOne(int64_t p, int64_t i, const std::byte* raw);

  /// Records an UninitializedRead (once) when any on-chip byte read was never written.
  void checkInitialized(int64_t instruction, std::string_view name) const;
  /// Marks every element written (on-chip only; HBM needs no shadow).
  void markAllWritten() const;

 private:
  void markOne(int64_t p, int64_t i) const;

  MemoryState& memory_;
  AccessPattern ap_;
  int bytes_;
  bool onChip_;
  std::vector<std::byte*> bases_;
  std::vector<int64_t> freeOffsets_;  ///< bytes from a partition's base
  int64_t minOffset_ = 0;             ///< bytes from ap.offset, over the free pattern
  int64_t maxOffset_ = 0;             ///< one past the last byte
  /// The free pattern's bytes as maximal runs {start byte, length}, for the written shadow.
  std::vector<std::pair<int64_t, int64_t>> runs_;
};

}  // namespace neuronsim::isa::detail
