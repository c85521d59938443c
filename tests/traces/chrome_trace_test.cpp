// Chrome trace JSON structure: tracks, complete events, counters, flows, span, reading back.
#include "traces/chrome_trace.h"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>

#include "fixture.h"
#include "isa/error.h"
#include "traces/report.h"

using namespace neuronsim;

namespace {

nlohmann::json writeAndParse(const traces::EventLog& log,
                             const nlohmann::json& summary = fixture::summary()) {
  fixture::TempFile file("trace.json");
  traces::writeChromeTrace(file.str(), fixture::program(), log, summary);
  std::ifstream in(file.path);
  return nlohmann::json::parse(in);
}

std::map<int, std::string> threadNames(const nlohmann::json& trace) {
  std::map<int, std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[e["tid"].get<int>()] = e["args"]["name"];
  return names;
}

}  // namespace

TEST_CASE("trace is a Chrome JSON object with ns display unit and the summary embedded") {
  const auto trace = writeAndParse(fixture::log());
  REQUIRE(trace.is_object());
  CHECK(trace["displayTimeUnit"] == "ns");
  REQUIRE(trace["traceEvents"].is_array());
  CHECK(trace["neuronsim"]["summary"]["kernel"] == "fixture");
  CHECK(trace["neuronsim"]["semaphores"].size() == 4);
  int processNames = 0;
  for (const auto& e : trace["traceEvents"]) {
    CHECK(e.contains("ph"));
    CHECK(e["pid"] == 1);
    if (e["ph"] == "M" && e["name"] == "process_name") {
      ++processNames;
      CHECK(e["args"]["name"] == "NeuronCore");
    }
  }
  CHECK(processNames == 1);
}

TEST_CASE("trace has a named, sorted track per engine and per DMA queue used") {
  const auto trace = writeAndParse(fixture::log());
  const auto names = threadNames(trace);
  CHECK(names.at(99) == "kernel");
  CHECK(names.at(1) == "tensor");
  CHECK(names.at(2) == "vector");
  CHECK(names.at(3) == "scalar");
  CHECK(names.at(4) == "gpsimd");
  CHECK(names.at(5) == "sync");
  CHECK(names.at(100) == "dma.q0");
  CHECK(names.at(101) == "dma.q1");
  CHECK(names.size() == 8);
  std::set<int> sorted;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") sorted.insert(e["tid"].get<int>());
  CHECK(sorted.size() == 8);
}

TEST_CASE("each instruction and DMA is a complete event in microseconds with its args") {
  const auto trace = writeAndParse(fixture::log());
  int instructions = 0, dmas = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "instruction") {
      ++instructions;
      if (e["args"]["index"] == 2) {
        CHECK(e["name"] == "nc_matmul");
        CHECK(e["tid"] == 1);
        CHECK(e["ts"].get<double>() == doctest::Approx(3.0));
        CHECK(e["dur"].get<double>() == doctest::Approx(0.5));
        CHECK(e["args"]["opcode"] == "nc_matmul");
        CHECK(e["args"]["flops"] == 2LL * 128 * 128 * 512);
        CHECK(e["args"]["cycles"] == 1200);
        CHECK(e["args"]["stall_ns"].get<double>() == doctest::Approx(3000));
        CHECK(e["args"]["stall_cause"] == "semaphore");
        CHECK(e["args"]["semaphore"] == "sem_vector");
        CHECK(e["args"]["wait_value"] == 1);
        CHECK(e["args"]["waited_on"] == 1);
        CHECK(!e["args"]["asm"].get<std::string>().empty());
      }
      if (e["args"]["index"] == 1) {
        CHECK(e["args"]["bytes_read"] == 131072);
        CHECK(e["args"]["bytes_written"] == 65536);
      }
    } else if (e["cat"] == "dma") {
      ++dmas;
      if (e["args"]["index"] == 0) {
        CHECK(e["tid"] == 100);
        CHECK(e["ts"].get<double>() == doctest::Approx(1.4));
        CHECK(e["dur"].get<double>() == doctest::Approx(1.0));
        CHECK(e["args"]["bytes"] == 65536);
        CHECK(e["args"]["bytes_per_partition"] == 512);
        CHECK(e["args"]["latency_ns"].get<double>() == doctest::Approx(1300));
        CHECK(e["args"]["gbps"].get<double>() == doctest::Approx(65.536));
      }
    }
  }
  CHECK(instructions == 4);
  CHECK(dmas == 2);
}

TEST_CASE("timestamps keep sub-nanosecond precision") {
  traces::EventLog log;
  log.instruction(fixture::inst(0, isa::Engine::Vector, isa::Opcode::TensorCopy, 0, 1.25, 2.5));
  const auto trace = writeAndParse(log, fixture::summary(2.5));
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "instruction") {
      CHECK(e["ts"].get<double>() * 1000 == doctest::Approx(1.25).epsilon(1e-9));
      CHECK(e["dur"].get<double>() * 1000 == doctest::Approx(1.25).epsilon(1e-9));
    }
}

TEST_CASE("trace span (max end - min start) equals the summary's total_ns") {
  const auto trace = writeAndParse(fixture::log());
  double lo = 1e300, hi = -1e300;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      lo = std::min(lo, e["ts"].get<double>());
      hi = std::max(hi, e["ts"].get<double>() + e["dur"].get<double>());
    }
  CHECK((hi - lo) * 1000 == doctest::Approx(5000.0));
}

TEST_CASE("counter samples become C events on named counter tracks") {
  const auto trace = writeAndParse(fixture::log());
  std::vector<double> values, times;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C") {
      CHECK(e["name"] == "pe_utilization");
      values.push_back(e["args"]["value"]);
      times.push_back(e["ts"]);
    }
  CHECK(values == std::vector<double>{0.0, 1.0, 0.0});
  REQUIRE(times.size() == 3);
  CHECK(times[1] == doctest::Approx(3.0));
}

TEST_CASE("semaphore dependencies become flow start/finish pairs bound to the right tracks") {
  const auto trace = writeAndParse(fixture::log());
  std::map<int64_t, nlohmann::json> starts, finishes;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "s") starts[e["id"].get<int64_t>()] = e;
    if (e["ph"] == "f") finishes[e["id"].get<int64_t>()] = e;
  }
  // 3 semaphore releases plus 2 DMA issues
  REQUIRE(starts.size() == 5);
  REQUIRE(finishes.size() == 5);
  int semaphoreFlows = 0;
  bool dmaToVector = false, vectorToTensor = false;
  for (const auto& [id, s] : starts) {
    REQUIRE(finishes.count(id));
    const auto& f = finishes[id];
    CHECK(f["bp"] == "e");
    CHECK(f["cat"] == s["cat"]);
    if (s["cat"] == "semaphore") ++semaphoreFlows;
    if (s["tid"] == 100 && f["tid"] == 2) dmaToVector = true;
    if (s["tid"] == 2 && f["tid"] == 1) {
      vectorToTensor = true;
      // bound at the middle of the vector [2.4, 3.0] and tensor [3.0, 3.5] slices
      CHECK(s["ts"].get<double>() == doctest::Approx(2.7));
      CHECK(f["ts"].get<double>() == doctest::Approx(3.25));
    }
  }
  CHECK(semaphoreFlows == 3);
  CHECK(dmaToVector);
  CHECK(vectorToTensor);
}

TEST_CASE("overlapping transfers on one queue go to an extra lane") {
  traces::EventLog log;
  log.dma(fixture::dma(0, 2, 0, 0, 1000, 4096));
  log.dma(fixture::dma(1, 2, 0, 500, 1500, 4096));
  log.dma(fixture::dma(2, 2, 0, 1000, 2000, 4096));
  const auto trace = writeAndParse(log, fixture::summary(2000));
  std::map<int64_t, int> tidOf;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "dma") tidOf[e["args"]["index"].get<int64_t>()] = e["tid"];
  CHECK(tidOf[0] == 102);
  CHECK(tidOf[1] == 1102);
  CHECK(tidOf[2] == 102);
  CHECK(threadNames(trace).at(1102) == "dma.q2 #2");
}

TEST_CASE("uninitialized reads are kept in the trace metadata") {
  auto log = fixture::log();
  log.uninitializedRead({1, "src1 sbuf p0-127 bytes 0-511"});
  const auto trace = writeAndParse(log);
  REQUIRE(trace["neuronsim"]["uninitialized_reads"].size() == 1);
  CHECK(trace["neuronsim"]["uninitialized_reads"][0]["index"] == 1);
}

TEST_CASE("loadTraceModel reads a written trace and rejects missing or bad files") {
  fixture::TempFile file("read.json");
  traces::writeChromeTrace(file.str(), fixture::program(), fixture::log(), fixture::summary());
  CHECK(traces::loadTraceModel(file.str()).summary["total_ns"] == 5000);
  CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str() + ".missing"),
                       doctest::Contains(".missing"), Error);
  for (const auto& [text, message] :
       {std::pair{"{\"traceEvents\": [", "is not valid JSON"},
        {"[1, 2]", "has no traceEvents array"},
        {"{\"other\": 1}", "has no traceEvents array"},
        {"{\"traceEvents\": {}}", "has no traceEvents array"},
        {"{\"traceEvents\": []}", "has no neuronsim section"},
        {"{\"traceEvents\": [], \"neuronsim\": 3}", "has no neuronsim section"}}) {
    CAPTURE(text);
    { std::ofstream(file.path) << text; }
    const std::string expected = fmt::format("trace '{}' {}", file.str(), message);
    CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str()), doctest::Contains(expected.c_str()),
                         Error);
  }
}

TEST_CASE("loadTraceModel names a run summary or sweep result given as a trace") {
  fixture::TempFile file("other.json");
  for (const auto& [text, message] :
       {std::pair{R"({"total_ns": 1, "engines": {}, "roofline_ns": 1})",
                  " is a run summary (from --summary-json), not a trace; write one with "
                  "neuronsim run or asm ... --trace FILE.json"},
        {R"({"sweep": {}, "results": []})", " is a sweep result (from sweep --json), not a trace"},
        {R"({"total_ns": 1, "engines": {}})", "' has no traceEvents array"},
        {R"({"x": {"total_ns": 1, "engines": {}, "roofline_ns": 1}})",
         "' has no traceEvents array"}}) {
    CAPTURE(text);
    { std::ofstream(file.path) << text; }
    const std::string expected = fmt::format("{}{}", file.str(), message);
    CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str()), doctest::Contains(expected.c_str()),
                         Error);
  }
}

TEST_CASE("writing to an impossible path is an error and leaves nothing behind") {
  CHECK_THROWS_AS(traces::writeChromeTrace("/nonexistent-dir/t.json", fixture::program(),
                                           fixture::log(), fixture::summary()),
                  Error);
}

TEST_CASE("a trace written without a summary still reads back and reports") {
  fixture::TempFile file("nosummary.json");
  traces::writeChromeTrace(file.str(), fixture::program(), fixture::log(), nlohmann::json());
  const auto trace = nlohmann::json::parse(std::ifstream(file.path));
  CHECK(trace["neuronsim"]["summary"].is_object());
  double kernelDur = -1;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel") kernelDur = e["dur"];
  CHECK(kernelDur == 0);
  CHECK(traces::reportText(traces::loadTraceModel(file.str())).find("critical path by resource") !=
        std::string::npos);
}
