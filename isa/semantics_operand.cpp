// Resolving an operand's access pattern to addresses, and bulk loads, stores and shadow checks.
#include "isa/semantics_operand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "isa/dtype_bits.h"
#include "isa/error.h"
#include "isa/footprint.h"

namespace neuronsim::isa::detail {

namespace {

std::string describe(const AccessPattern& ap) {
  std::string s(spaceName(ap.space));
  if (ap.space == Space::Hbm) s += fmt::format(" tensor {}", ap.tensor);
  s += fmt::format(" partitions [{}, {}) offset {}", ap.partitionStart,
                   ap.partitionStart + ap.partitionCount, ap.offset);
  return s;
}

}  // namespace

OperandRef::OperandRef(MemoryState& memory, const AccessPattern& ap)
    : memory_(memory), ap_(ap), bytes_(dtypeBytes(ap.dtype)), onChip_(ap.space != Space::Hbm) {
  // 1. Free-axis offsets in visiting order (row-major over dims), in bytes.
  const int64_t free = ap.freeSize();
  freeOffsets_ = visitOffsets(ap.dims);
  if (free < 0 || ap.partitionCount < 0 || static_cast<int64_t>(freeOffsets_.size()) != free)
    throw Error(fmt::format("operand {}: negative element count", describe(ap)));
  for (int64_t& off : freeOffsets_) off *= bytes_;
  if (free > 0) {
    const auto [lo, hi] = std::minmax_element(freeOffsets_.begin(), freeOffsets_.end());
    minOffset_ = *lo;
    maxOffset_ = *hi + bytes_;
  }

  // 2. Partition bases, with the bounds of every partition's range checked once.
  bases_.resize(static_cast<size_t>(ap.partitionCount));
  if (onChip_) {
    const Geometry& g = memory.geometry();
    const int64_t partBytes = ap.space == Space::Sbuf ? g.sbufPartitionBytes : g.psumPartitionBytes;
    if (ap.partitionStart < 0 || ap.partitionStart + ap.partitionCount > g.partitions)
      throw Error(
          fmt::format("operand {}: partitions outside [0, {})", describe(ap), g.partitions));
    if (free > 0 && (ap.offset + minOffset_ < 0 || ap.offset + maxOffset_ > partBytes))
      throw Error(fmt::format("operand {}: bytes [{}, {}) outside the {}-byte partition",
                              describe(ap), ap.offset + minOffset_, ap.offset + maxOffset_,
                              partBytes));
    for (auto& off : freeOffsets_) off += ap.offset;
    for (int32_t p = 0; p < ap.partitionCount; ++p)
      bases_[p] = memory.onChip(ap.space, ap.partitionStart + p, 0);
  } else {
    if (ap.tensor < 0 || ap.tensor >= static_cast<int32_t>(memory.hbmTensorCount()))
      throw Error(fmt::format("operand {}: no such hbm tensor", describe(ap)));
    std::vector<std::byte>& buf = memory.hbm(ap.tensor);
    const auto size = static_cast<int64_t>(buf.size());
    for (int32_t p = 0; p < ap.partitionCount; ++p) {
      const int64_t start = (ap.offset + p * ap.partitionStep) * bytes_;
      if (free > 0 && (start + minOffset_ < 0 || start + maxOffset_ > size))
        throw Error(
            fmt::format("operand {}: row {} reaches bytes [{}, {}) outside the tensor's {} bytes",
                        describe(ap), p, start + minOffset_, start + maxOffset_, size));
    }
    for (auto& off : freeOffsets_) off += ap.offset * bytes_;
    for (int32_t p = 0; p < ap.partitionCount; ++p)
      bases_[p] = buf.data() + p * ap.partitionStep * bytes_;
  }

  // 3. Byte runs of consecutive elements (visiting order), for the on-chip shadow.
  if (onChip_) {
    for (int64_t off : freeOffsets_) {
      if (!runs_.empty() && runs_.back().first + runs_.back().second == off) {
        runs_.back().second += bytes_;
      } else {
        runs_.emplace_back(off, bytes_);
      }
    }
  }
}

namespace {

/// Gathers every element (visiting order) into `out`; the element width is a compile-time constant.
template <int kBytes>
void copyOut(const std::vector<std::byte*>& bases, const std::vector<int64_t>& offsets,
             std::byte* out) {
  for (std::byte* base : bases)
    for (int64_t off : offsets) {
      std::memcpy(out, base + off, kBytes);
      out += kBytes;
    }
}

/// Scatters `in` (visiting order) to every element.
template <int kBytes>
void copyIn(const std::vector<std::byte*>& bases, const std::vector<int64_t>& offsets,
            const std::byte* in) {
  for (std::byte* base : bases)
    for (int64_t off : offsets) {
      std::memcpy(base + off, in, kBytes);
      in += kBytes;
    }
}

}  // namespace

std::vector<float> OperandRef::loadFloats() const {
  std::vector<float> out(static_cast<size_t>(size()));
  float* o = out.data();
  switch (ap_.dtype) {
    case Dtype::Fp32:
      copyOut<4>(bases_, freeOffsets_, reinterpret_cast<std::byte*>(o));
      break;
    case Dtype::Bf16:
      for (const std::byte* base : bases_)
        for (int64_t off : freeOffsets_) {
          uint16_t b;
          std::memcpy(&b, base + off, 2);
          *o++ = bf16ToFloat(b);
        }
      break;
    default:
      for (const std::byte* base : bases_)
        for (int64_t off : freeOffsets_) *o++ = loadElement(ap_.dtype, base + off);
  }
  return out;
}

std::vector<std::byte> OperandRef::loadRaw() const {
  std::vector<std::byte> out(static_cast<size_t>(size() * bytes_));
  if (bytes_ == 4)
    copyOut<4>(bases_, freeOffsets_, out.data());
  else if (bytes_ == 2)
    copyOut<2>(bases_, freeOffsets_, out.data());
  else
    copyOut<1>(bases_, freeOffsets_, out.data());
  return out;
}

void OperandRef::storeFloats(const float* values) {
  switch (ap_.dtype) {
    case Dtype::Fp32:
      copyIn<4>(bases_, freeOffsets_, reinterpret_cast<const std::byte*>(values));
      break;
    case Dtype::Bf16:
      for (std::byte* base : bases_)
        for (int64_t off : freeOffsets_) {
          const uint16_t b = floatToBf16(*values++);
          std::memcpy(base + off, &b, 2);
        }
      break;
    default:
      for (std::byte* base : bases_)
        for (int64_t off : freeOffsets_) storeElement(ap_.dtype, *values++, base + off);
  }
  markAllWritten();
}

void OperandRef::storeRaw(const std::byte* raw) {
  if (bytes_ == 4)
    copyIn<4>(bases_, freeOffsets_, raw);
  else if (bytes_ == 2)
    copyIn<2>(bases_, freeOffsets_, raw);
  else
    copyIn<1>(bases_, freeOffsets_, raw);
  markAllWritten();
}

void OperandRef::storeOne(int64_t p, int64_t i, float value) {
  storeElement(ap_.dtype, value, element(p, i));
  markOne(p, i);
}

void OperandRef::storeRawOne(int64_t p, int64_t i, const std::byte* raw) {
  std::memcpy(element(p, i), raw, static_cast<size_t>(bytes_));
  markOne(p, i);
}

void OperandRef::checkInitialized(int64_t instruction, std::string_view name) const {
  if (!onChip_) return;
  for (int64_t p = 0; p < partitions(); ++p) {
    const int32_t part = ap_.partitionStart + static_cast<int32_t>(p);
    for (const auto& [start, length] : runs_)
      if (!memory_.isWritten(ap_.space, part, start, length)) {
        memory_.uninitializedReads().push_back({instruction, std::string(name)});
        return;
      }
  }
}

void OperandRef::markAllWritten() const {
  if (!onChip_) return;
  for (int64_t p = 0; p < partitions(); ++p) {
    const int32_t part = ap_.partitionStart + static_cast<int32_t>(p);
    for (const auto& [start, length] : runs_) memory_.markWritten(ap_.space, part, start, length);
  }
}

void OperandRef::markOne(int64_t p, int64_t i) const {
  if (onChip_)
    memory_.markWritten(ap_.space, ap_.partitionStart + static_cast<int32_t>(p), freeOffsets_[i],
                        bytes_);
}

}  // namespace neuronsim::isa::detail
