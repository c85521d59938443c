#pragma once
// The contents of HBM, SBUF and PSUM during a run, with a record of never-written reads.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/geometry.h"
#include "isa/program.h"

namespace neuronsim::isa {

/// A read of SBUF/PSUM bytes that no instruction had written.
struct UninitializedRead {
  int64_t instruction = -1;  ///< index into Program::instructions
  std::string operand;       ///< e.g. "srcs[1]", "bias"
};

/// HBM holds one buffer per TensorDecl (inputs zero until set). Fresh SBUF and PSUM are
/// filled with 0xFF bytes (NaN in every float dtype) and tracked byte by byte, so a read of
/// never-written memory both shows as NaN and is recorded.
class MemoryState {
 public:
  MemoryState(const Program& program, const Geometry& geometry);

  const Geometry& geometry() const { return geometry_; }
  std::vector<std::byte>& hbm(int32_t tensor) { return hbm_.at(tensor); }
  const std::vector<std::byte>& hbm(int32_t tensor) const { return hbm_.at(tensor); }
  /// Number of HBM tensors (Program::tensors.size()).
  size_t hbmTensorCount() const { return hbm_.size(); }
  /// Pointer to byte `offset` of partition `partition` in SBUF or PSUM (space != Hbm).
  std::byte* onChip(Space space, int32_t partition, int64_t offset);
  /// Marks bytes written (space != Hbm).
  void markWritten(Space space, int32_t partition, int64_t offset, int64_t bytes);
  /// True when every byte in the range was written before.
  bool isWritten(Space space, int32_t partition, int64_t offset, int64_t bytes) const;

  /// Fills tensor `tensor` from fp32 values (converted to its dtype); size must match.
  void setTensor(int32_t tensor, const std::vector<float>& values);
  /// Reads tensor `tensor` as fp32 values.
  std::vector<float> getTensor(int32_t tensor) const;

  std::vector<UninitializedRead>& uninitializedReads() { return uninitializedReads_; }

 private:
  Geometry geometry_;
  std::vector<Dtype> hbmDtypes_;
  std::vector<std::vector<std::byte>> hbm_;
  std::vector<std::byte> sbuf_, psum_;
  std::vector<uint8_t> sbufWritten_, psumWritten_;
  std::vector<UninitializedRead> uninitializedReads_;
};

}  // namespace neuronsim::isa
