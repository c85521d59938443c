// HBM tensors and SBUF/PSUM bytes with a per-byte "written" shadow.
#include "isa/memory_state.h"

#include <fmt/format.h>

#include <cstring>

#include "isa/error.h"

namespace neuronsim::isa {

namespace {

std::string rangeText(Space space, int32_t partition, int64_t offset, int64_t bytes) {
  return fmt::format("{} partition {} bytes [{}, {})", spaceName(space), partition, offset,
                     offset + bytes);
}

}  // namespace

MemoryState::MemoryState(const Program& program, const Geometry& geometry) : geometry_(geometry) {
  for (const TensorDecl& t : program.tensors) {
    hbmDtypes_.push_back(t.dtype);
    hbm_.emplace_back(static_cast<size_t>(t.numElements() * dtypeBytes(t.dtype)), std::byte{0});
  }
  const auto parts = static_cast<size_t>(geometry.partitions);
  sbuf_.assign(parts * static_cast<size_t>(geometry.sbufPartitionBytes), std::byte{0xFF});
  psum_.assign(parts * static_cast<size_t>(geometry.psumPartitionBytes), std::byte{0xFF});
  sbufWritten_.assign(sbuf_.size(), 0);
  psumWritten_.assign(psum_.size(), 0);
}

namespace {

/// Index of the first byte of the range in a flat partition-major buffer; throws when out of range.
size_t flatIndex(const Geometry& g, Space space, int32_t partition, int64_t offset, int64_t bytes) {
  if (space == Space::Hbm) throw Error("memory: on-chip access to hbm");
  const int64_t partBytes = space == Space::Sbuf ? g.sbufPartitionBytes : g.psumPartitionBytes;
  if (partition < 0 || partition >= g.partitions || offset < 0 || bytes < 0 ||
      offset + bytes > partBytes)
    throw Error(fmt::format("memory: {} is outside the {} x {}-byte {}",
                            rangeText(space, partition, offset, bytes), g.partitions, partBytes,
                            spaceName(space)));
  return static_cast<size_t>(partition) * static_cast<size_t>(partBytes) +
         static_cast<size_t>(offset);
}

}  // namespace

std::byte* MemoryState::onChip(Space space, int32_t partition, int64_t offset) {
  const size_t i = flatIndex(geometry_, space, partition, offset, 0);
  return (space == Space::Sbuf ? sbuf_.data() : psum_.data()) + i;
}

void MemoryState::markWritten(Space space, int32_t partition, int64_t offset, int64_t bytes) {
  const size_t i = flatIndex(geometry_, space, partition, offset, bytes);
  uint8_t* shadow = (space == Space::Sbuf ? sbufWritten_.data() : psumWritten_.data()) + i;
  std::memset(shadow, 1, static_cast<size_t>(bytes));
}

bool MemoryState::isWritten(Space space, int32_t partition, int64_t offset, int64_t bytes) const {
  const size_t i = flatIndex(geometry_, space, partition, offset, bytes);
  const uint8_t* shadow = (space == Space::Sbuf ? sbufWritten_.data() : psumWritten_.data()) + i;
  return std::memchr(shadow, 0, static_cast<size_t>(bytes)) == nullptr;
}

void MemoryState::setTensor(int32_t tensor, const std::vector<float>& values) {
  std::vector<std::byte>& buf = hbm_.at(tensor);
  const Dtype dtype = hbmDtypes_.at(tensor);
  const auto bytes = static_cast<size_t>(dtypeBytes(dtype));
  if (values.size() * bytes != buf.size())
    throw Error(fmt::format("memory: tensor {} holds {} elements but {} values were given", tensor,
                            buf.size() / bytes, values.size()));
  for (size_t i = 0; i < values.size(); ++i) storeElement(dtype, values[i], buf.data() + i * bytes);
}

std::vector<float> MemoryState::getTensor(int32_t tensor) const {
  const std::vector<std::byte>& buf = hbm_.at(tensor);
  const Dtype dtype = hbmDtypes_.at(tensor);
  const auto bytes = static_cast<size_t>(dtypeBytes(dtype));
  std::vector<float> out(buf.size() / bytes);
  for (size_t i = 0; i < out.size(); ++i) out[i] = loadElement(dtype, buf.data() + i * bytes);
  return out;
}

}  // namespace neuronsim::isa
