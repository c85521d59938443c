#pragma once
// Reading and writing NumPy .npy files.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace neuronsim::isa {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  ///< C order
};

/// What an .npy header declares, checked against the file's size.
struct NpyHeader {
  std::vector<int64_t> shape;
  int itemBytes = 4;       ///< 2, 4 or 8: float16, float32 or float64
  int64_t elements = 0;    ///< product of shape (at most kMaxTensorElements)
  int64_t dataOffset = 0;  ///< bytes before the data
};

/// Reads and checks only the preamble and the header of a C-order float32, float64 or float16
/// .npy file: magic and version first, a header of at most kMaxNpyHeaderBytes, a shape within
/// the size limits, and (for a regular file) a data size that matches. Nothing as large as the
/// data is allocated. Throws neuronsim::Error "<path>: <problem>".
NpyHeader readNpyHeader(const std::string& path);
/// Reads the whole array (streamed in chunks after readNpyHeader's checks).
NpyArray readNpy(const std::string& path);
/// Writes float32 C order atomically (isa/file_write.h): nothing is left half written.
void writeNpy(const std::string& path, const NpyArray& array);
/// Writes float32 C order straight to `path` (a temporary from OutputSet::stage).
void writeNpyFile(const std::string& path, std::span<const int64_t> shape,
                  std::span<const float> values);

}  // namespace neuronsim::isa
