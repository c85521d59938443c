// Regressions from fuzzing the machine JSON reader (fuzz/fuzz_machine.cpp; docs/hardening.md):
// each input once escaped as a non-neuronsim exception and must now be one Error naming the file.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "isa/error.h"
#include "sim/machine_config.h"

using namespace neuronsim;

namespace {

/// The Error loadMachine throws for a machine file holding `text` ("" when it loads).
std::string machineFileError(const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("neuronsim_fuzz_machine_{}.json", ::getpid()))
                               .string();
  std::ofstream(path) << text;
  std::string error;
  try {
    sim::loadMachine(path);
  } catch (const Error& e) {
    error = e.what();
  }
  std::remove(path.c_str());
  return error;
}

}  // namespace

TEST_CASE("a machine file with a number beyond double range is invalid JSON, not a crash") {
  // nlohmann reports the overflow as out_of_range, which escaped the parse_error handler.
  const std::string error =
      machineFileError(R"({"params": {"pe_ghz": {"value": 11e308, "source": "A1"}}})");
  CHECK(error.find("not valid JSON") != std::string::npos);
  CHECK(error.find("number overflow") != std::string::npos);
}

TEST_CASE("an integer parameter beyond int64 is too large, not negative") {
  const std::string error = machineFileError(
      R"({"params": {"dma_engines": {"value": 18446744073709551615, "source": "A1"}}})");
  CHECK(error.find("dma_engines = 18446744073709551615: is too large") != std::string::npos);
  // The largest int64 reads as itself and meets the range check.
  CHECK(machineFileError(
            R"({"params": {"min_ii_cycles": {"value": 9223372036854775807, "source": "A1"}}})")
            .find("min_ii_cycles = 9223372036854775807: must be within") != std::string::npos);
}
