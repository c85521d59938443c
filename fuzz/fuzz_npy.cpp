// libFuzzer target: the .npy reader, on a file holding the input bytes.
#include <cstdint>

#include "fuzz/memory_file.h"
#include "isa/error.h"
#include "isa/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static neuronsim::fuzz::MemoryFile file;
  try {
    neuronsim::isa::readNpy(file.write(data, size));
  } catch (const neuronsim::Error&) {
  }
  return 0;
}
