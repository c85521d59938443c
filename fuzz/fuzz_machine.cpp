// libFuzzer target: the machine JSON reader (--machine FILE.json), on a file holding the input.
#include <cstdint>

#include "fuzz/memory_file.h"
#include "isa/error.h"
#include "sim/machine_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static neuronsim::fuzz::MemoryFile file;
  try {
    neuronsim::sim::loadMachine(file.write(data, size));
  } catch (const neuronsim::Error&) {
  }
  return 0;
}
