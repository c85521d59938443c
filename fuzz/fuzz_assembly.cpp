// libFuzzer target: the text-assembly parser. Accepted text must print and parse back to the
// same program, and validation must answer with an Error or nothing.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace neuronsim;
  isa::Program program;
  try {
    program = isa::parseProgram(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const Error&) {
    return 0;
  }
  const std::string printed = isa::printProgram(program);
  if (isa::printProgram(isa::parseProgram(printed, "printed")) != printed) std::abort();
  try {
    isa::validateProgram(program, isa::Geometry{});
  } catch (const Error&) {
  }
  return 0;
}
