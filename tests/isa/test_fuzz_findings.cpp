// Regressions from fuzzing the assembly parser and the .npy reader (fuzz/; docs/hardening.md): each
// input once crashed, hit undefined behaviour or over-allocated, and must now be read or refused
// with a neuronsim::Error.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/npy.h"

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

/// The process's peak resident set so far, in KiB.
long peakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
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

TEST_CASE("npy: a stream's header claim allocates nothing before its data arrives") {
  // Found while pointing fuzz_npy at the FIFO path of the streamed reader: readNpy sized the
  // array from the header before reading, so a 1 KB stream claiming 2^28 floats allocated and
  // zeroed 1 GiB (16 GiB at the element limit) before failing as truncated.
  char dir[] = "/tmp/neuronsim-npy-claim-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/claim.npy";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (268435456,), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  const std::string bytes =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xFF) +
      static_cast<char>(header.size() >> 8) + header + std::string(1024, '\0');
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  const long peakBefore = peakRssKiB();
  std::string error;
  try {
    isa::readNpy(fifo);
  } catch (const Error& e) {
    error = e.what();
  }
  writer.join();
  const long grewKiB = peakRssKiB() - peakBefore;
  std::remove(fifo.c_str());
  rmdir(dir);
  CHECK(error.find("truncated data: shape (268435456,) needs 1073741824 bytes") !=
        std::string::npos);
  CHECK(grewKiB < 256 * 1024);
}
