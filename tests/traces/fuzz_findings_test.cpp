// Regressions from fuzzing the trace reader (fuzz/fuzz_trace.cpp; docs/hardening.md): each input
// once crashed or hit undefined behaviour and must now load or fail with a neuronsim::Error.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "fixture.h"
#include "isa/error.h"
#include "traces/trace_model.h"

using namespace neuronsim;

namespace {

/// Loads `text` as a trace file.
traces::TraceModel load(const std::string& text) {
  fixture::TempFile file("fuzz_finding.json");
  { std::ofstream(file.path) << text; }
  return traces::loadTraceModel(file.str());
}

std::string withSection(const std::string& neuronsim) {
  return R"({"traceEvents":[],"neuronsim":)" + neuronsim + "}";
}

std::string withEvent(const std::string& event) {
  return R"({"traceEvents":[)" + event + R"(],"neuronsim":{}})";
}

}  // namespace

TEST_CASE("a complete event's tid outside 32 bits is an error naming the tid") {
  CHECK_THROWS_WITH_AS(load(withEvent(R"({"ph":"X","ts":0,"tid":1e300,"cat":"instruction"})")),
                       doctest::Contains("tid 1e+300"), Error);
  CHECK_THROWS_WITH_AS(load(withEvent(R"({"ph":"X","ts":0,"tid":-3000000000,"cat":"dma"})")),
                       doctest::Contains("32-bit"), Error);
  CHECK(load(withEvent(R"({"ph":"X","ts":0,"tid":2147483647,"cat":"dma"})")).spans.size() == 1);
}

TEST_CASE("an integer arg beyond int64 reads as absent") {
  const auto model = load(withEvent(
      R"({"ph":"X","ts":0,"tid":2,"cat":"instruction","args":{"index":1e300,"cycles":-9.3e18,"flops":9.2e18}})"));
  REQUIRE(model.spans.size() == 1);
  CHECK(model.spans[0].index == -1);
  CHECK(model.spans[0].cycles == 0);
  CHECK(model.spans[0].flops == 9200000000000000000);
}

TEST_CASE(
    "neuronsim.tracks and uninitialized_reads of the wrong shape are errors naming the entry") {
  CHECK_THROWS_WITH_AS(load(withSection(R"({"tracks":1})")),
                       doctest::Contains("neuronsim.tracks is not a list"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"tracks":[{"tid":1},7]})")),
                       doctest::Contains("neuronsim.tracks[1] is not an object"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"tracks":[{"tid":"2"}]})")),
                       doctest::Contains("tracks[0].tid is \"2\" (want an integer)"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"tracks":[{"tid":10000000000}]})")),
                       doctest::Contains("32-bit"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"tracks":[{"tid":2,"name":[]}]})")),
                       doctest::Contains("tracks[0].name"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"uninitialized_reads":[{"index":1e300}]})")),
                       doctest::Contains("uninitialized_reads[0].index"), Error);
  CHECK_THROWS_WITH_AS(load(withSection(R"({"uninitialized_reads":[{"what":{"a":1}}]})")),
                       doctest::Contains("uninitialized_reads[0].what"), Error);
  const auto model = load(withSection(
      R"({"tracks":[{"tid":3},{"tid":2,"name":"v"}],"uninitialized_reads":[{"index":4,"what":"x"}]})"));
  REQUIRE(model.tracks.size() == 2);
  CHECK(model.tracks[0].second == "scalar");
  CHECK(model.tracks[1].second == "v");
  REQUIRE(model.uninitializedReads.size() == 1);
  CHECK(model.uninitializedReads[0].first == 4);
}

TEST_CASE("times beyond 1000 s or not finite are errors naming the field") {
  // Found by fuzz_trace: a start_ns of 1e31 became INT64_MIN picoseconds, and the report's
  // what-if replay overflowed subtracting it.
  CHECK_THROWS_WITH_AS(
      load(withEvent(
          R"({"ph":"X","ts":1,"dur":1,"tid":2,"cat":"instruction","args":{"start_ns":1e31}})")),
      doctest::Contains("start is 1e+31 ns"), Error);
  CHECK_THROWS_WITH_AS(load(withEvent(R"({"ph":"X","ts":-2e9,"tid":2,"cat":"dma"})")),
                       doctest::Contains("ts is"), Error);
  CHECK_THROWS_WITH_AS(
      load(withEvent(R"({"ph":"X","ts":1,"tid":2,"cat":"instruction","args":{"ready_ns":-1e13}})")),
      doctest::Contains("ready time"), Error);
  CHECK(load(withEvent(R"({"ph":"X","ts":9e8,"dur":1,"tid":2,"cat":"dma"})")).spans.size() == 1);
}
