// Summary metrics against hand-computed values.
#include "traces/summary.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace neuronsim;
using traces::RunInfo;
using traces::RunTotals;

namespace {

RunInfo info() {
  return RunInfo{"k", "trn2", "fp32", 100, 10, 8000};
}

RunTotals totals() {
  RunTotals t;
  t.total = traces::Tick::fromNs(1000);
  t.engines[0] = {traces::Tick::fromNs(250), 4, traces::Tick::fromNs(300)};  // tensor
  t.engines[1] = {traces::Tick::fromNs(600), 3, traces::Tick::fromNs(700)};  // vector
  t.engines[4] = {traces::Tick::fromNs(100), 2, traces::Tick::fromNs(100)};  // sync
  t.instructions = 10;
  t.dmaBytes = 4000;
  t.dmaTransfers = 2;
  t.dmaActive = traces::Tick::fromNs(500);
  t.hbmBytes = 3000;
  t.flops = 50000;
  t.transposeFlops = 1234;
  t.sbufReadBytes = 11;
  t.sbufWriteBytes = 22;
  t.hostSeconds = 0.5;
  return t;
}

}  // namespace

TEST_CASE("summary has every DESIGN.md key with hand-computed values") {
  const auto s = traces::summaryJson(info(), totals());
  CHECK(s["kernel"] == "k");
  CHECK(s["machine"] == "trn2");
  CHECK(s["dtype"] == "fp32");
  CHECK(s["total_ns"].get<double>() == 1000);
  CHECK(s["instructions"].get<int64_t>() == 10);
  for (const char* e : {"tensor", "vector", "scalar", "gpsimd", "sync"}) {
    REQUIRE(s["engines"].contains(e));
    CHECK(s["engines"][e].contains("busy_ns"));
    CHECK(s["engines"][e].contains("active_percent"));
    CHECK(s["engines"][e].contains("instructions"));
  }
  CHECK(s["engines"]["tensor"]["busy_ns"].get<double>() == doctest::Approx(250.0));
  CHECK(s["engines"]["tensor"]["active_ns"].get<double>() == doctest::Approx(300.0));
  CHECK(s["engines"]["tensor"]["active_percent"].get<double>() == doctest::Approx(30.0));
  CHECK(s["engines"]["vector"]["active_percent"].get<double>() == doctest::Approx(70.0));
  CHECK(s["engines"]["vector"]["instructions"].get<int64_t>() == 3);
  CHECK(s["engines"]["scalar"]["active_percent"].get<double>() == 0.0);
  CHECK(s["dma"]["bytes"].get<int64_t>() == 4000);
  CHECK(s["dma"]["transfers"].get<int64_t>() == 2);
  CHECK(s["dma"]["active_percent"].get<double>() == doctest::Approx(50.0));
  CHECK(s["dma"]["achieved_gbps"].get<double>() == doctest::Approx(4.0));
  CHECK(s["dma"]["average_bytes"].get<double>() == doctest::Approx(2000.0));
  CHECK(s["flops"].get<int64_t>() == 50000);
  CHECK(s["hbm_bytes"].get<int64_t>() == 3000);
  CHECK(s["host_seconds"].get<double>() == 0.5);
  CHECK(s["sim_instructions_per_second"].get<double>() == doctest::Approx(20.0));
}

TEST_CASE("summary MFU, MBU and roofline") {
  const auto s = traces::summaryJson(info(), totals());
  // 50000 flop / (100 flop/ns * 1000 ns)
  CHECK(s["mfu_percent"].get<double>() == doctest::Approx(50.0));
  // fp32 counts 4x in bf16-adjusted flops
  CHECK(s["adjusted_flops"].get<double>() == doctest::Approx(200000.0));
  // 3000 B / (10 B/ns * 1000 ns)
  CHECK(s["mbu_percent"].get<double>() == doctest::Approx(30.0));
  // max(50000/100, 8000/10) = 800 ns, memory bound
  CHECK(s["roofline_ns"].get<double>() == doctest::Approx(800.0));
  CHECK(s["roofline_percent"].get<double>() == doctest::Approx(80.0));
  CHECK(s["roofline_bound"] == "memory");
  CHECK(s["transpose_flops"].get<int64_t>() == 1234);
  CHECK(s["sbuf_read_bytes"].get<int64_t>() == 11);
  CHECK(s["sbuf_write_bytes"].get<int64_t>() == 22);
}

TEST_CASE("summary roofline is compute bound when flops dominate") {
  RunInfo i = info();
  i.minHbmBytes = 100;  // 10 ns of HBM time against 500 ns of PE time
  const auto s = traces::summaryJson(i, totals());
  CHECK(s["roofline_ns"].get<double>() == doctest::Approx(500.0));
  CHECK(s["roofline_bound"] == "compute");
}

TEST_CASE("summary guards every division by zero") {
  const auto s = traces::summaryJson(RunInfo{}, RunTotals{});
  for (const char* key : {"mfu_percent", "mbu_percent", "roofline_ns", "roofline_percent",
                          "sim_instructions_per_second"}) {
    CAPTURE(key);
    CHECK(s[key].get<double>() == 0.0);
  }
  CHECK(s["dma"]["achieved_gbps"].get<double>() == 0.0);
  CHECK(s["dma"]["average_bytes"].get<double>() == 0.0);
  CHECK(s["engines"]["tensor"]["active_percent"].get<double>() == 0.0);
  CHECK(s.dump().find("null") == std::string::npos);
}

TEST_CASE("summary text names the kernel, engines and the key percentages") {
  const std::string text = traces::summaryText(traces::summaryJson(info(), totals()));
  CHECK(text.find("k on trn2 (fp32): 1.000 us") != std::string::npos);
  CHECK(text.find("vector") != std::string::npos);
  CHECK(text.find("70.0%") != std::string::npos);
  CHECK(text.find("MFU 50.00%") != std::string::npos);
  CHECK(text.find("MBU 30.00%") != std::string::npos);
  CHECK(text.find("achieved 80.0% of roofline") != std::string::npos);
}

TEST_CASE("summary text lists engines in hardware order") {
  const std::string text = traces::summaryText(traces::summaryJson(info(), totals()));
  const auto tensor = text.find("  tensor"), vector = text.find("  vector"),
             scalar = text.find("  scalar"), gpsimd = text.find("  gpsimd"),
             sync = text.find("  sync");
  REQUIRE(sync != std::string::npos);
  CHECK(tensor < vector);
  CHECK(vector < scalar);
  CHECK(scalar < gpsimd);
  CHECK(gpsimd < sync);
}

TEST_CASE("summary text's host line: build and simulation apart, the rate only on large runs") {
  RunTotals small = totals();
  nlohmann::json s = traces::summaryJson(info(), small);
  CHECK(traces::summaryText(s).find("  host time: simulation 0.500 s\n") != std::string::npos);
  s["build_seconds"] = 0.25;
  CHECK(traces::summaryText(s).find("  host time: build 0.250 s, simulation 0.500 s\n") !=
        std::string::npos);
  CHECK(traces::summaryText(s).find("instructions/s") == std::string::npos);

  RunTotals large = totals();
  large.instructions = 1000000;
  s = traces::summaryJson(info(), large);
  CHECK(traces::summaryText(s).find("  host time: simulation 0.500 s (2.00M simulated "
                                    "instructions/s)\n") != std::string::npos);
}
