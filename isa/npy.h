#pragma once
// Reading and writing NumPy .npy files.

#include <cstdint>
#include <string>
#include <vector>

namespace neuronsim::isa {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  ///< C order
};

/// Reads a C-order float32, float64 or float16 .npy file; throws neuronsim::Error naming
/// the file and the problem otherwise.
NpyArray readNpy(const std::string& path);
/// Writes float32 C order (to a temporary then renamed, so nothing is left half written).
void writeNpy(const std::string& path, const NpyArray& array);

}  // namespace neuronsim::isa
