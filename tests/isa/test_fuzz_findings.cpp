// Regressions from fuzzing the assembly parser (fuzz/fuzz_assembly.cpp; docs/hardening.md): each
// input once crashed or hit undefined behaviour and must now parse or fail with a neuronsim::Error.
#include <doctest/doctest.h>

#include <string>

#include "isa/assembly.h"
#include "isa/error.h"

using namespace neuronsim;

namespace {

std::string parseError(const std::string& text) {
  try {
    isa::parseProgram(text, "f.nsasm");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("assembly: a partition range whose end is far outside 32 bits is an error") {
  // end - start overflowed int64 before the range check.
  CHECK(parseError("sync dma_copy dst=sbuf:fp32[-1:9223372036854775807]@0[]\n") ==
        "f.nsasm:1: bad dst 'sbuf:fp32[-1:9223372036854775807]@0[]': partition range does not "
        "fit in 32 bits");
  CHECK(parseError("sync dma_copy dst=sbuf:fp32[1:-9223372036854775808]@0[]\n")
            .find("partition range does not fit in 32 bits") != std::string::npos);
  CHECK(parseError("sync dma_copy dst=sbuf:fp32[0:2147483648]@0[]\n")
            .find("partition range does not fit in 32 bits") != std::string::npos);
  CHECK(parseError("sync dma_copy dst=sbuf:fp32[-2:2147483647]@0[]\n")
            .find("partition range does not fit in 32 bits") != std::string::npos);
  const auto program = isa::parseProgram("sync dma_copy dst=sbuf:fp32[-2:2147483645]@0[]\n");
  CHECK(program.instructions.at(0).dst.partitionStart == -2);
  CHECK(program.instructions.at(0).dst.partitionCount == 2147483647);
}
