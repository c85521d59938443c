// Machine presets: embedded values, overrides, and errors that name the key and value.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "isa/error.h"
#include "sim/machine_config.h"

using namespace neuronsim;

namespace {
std::string errorOf(const std::string& name, const std::vector<std::string>& overrides = {}) {
  try {
    sim::loadMachine(name, overrides);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
std::string writeTemp(const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("neuronsim_machine_{}.json", ::getpid()))
                               .string();
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("presets carry the reference figures") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(trn2.name == "trn2");
  CHECK(trn2.geometry.sbufPartitionBytes == 224 * 1024);
  CHECK(trn1.geometry.sbufPartitionBytes == 192 * 1024);
  CHECK(trn2.geometry.peGhz == 2.4);
  CHECK(trn1.geometry.peGhz == 2.8);
  CHECK(trn2.dmaEngineBytesPerNs == 23);
  CHECK(trn1.dmaEngineBytesPerNs == 17);
  CHECK(trn2.peThrottle);
  CHECK_FALSE(trn1.peThrottle);
  CHECK(trn1.geometry.accessConflicts);
  CHECK_FALSE(trn2.geometry.accessConflicts);
  CHECK(trn2.peakBf16Flops() == doctest::Approx(78.6e12).epsilon(0.001));
  for (const sim::MachineConfig* m : {&trn1, &trn2}) {
    CHECK(m->geometry.peRows == 128);  // A1/A2: the 128x128 systolic array
    CHECK(m->geometry.peCols == 128);
  }
  CHECK(sim::machinePresetNames().front() == "trn2");
}

TEST_CASE("the PE array is a parameter: --set pe_rows, pe_cols; the partitions cap it") {
  const sim::MachineConfig small = sim::loadMachine("trn2", {"pe_rows=64", "pe_cols=32"});
  CHECK(small.geometry.maxContraction() == 64);
  CHECK(small.geometry.maxStationaryFree() == 32);
  CHECK(small.geometry.peTile() == 32);
  CHECK(small.peakBf16Flops() == doctest::Approx(2.0 * 64 * 32 * 2.4e9));
  const sim::MachineConfig few = sim::loadMachine("trn2", {"partitions=64"});
  CHECK(few.geometry.peTile() == 64);
  CHECK(few.peakBf16Flops() == doctest::Approx(2.0 * 64 * 64 * 2.4e9));
  CHECK(errorOf("trn2", {"pe_rows=0"}).find("--set: pe_rows = 0: must be within [1, 1024]") == 0);
  CHECK(errorOf("trn2", {"pe_cols=2048"}).find("pe_cols = 2048: must be within [1, 1024]") !=
        std::string::npos);
  const auto values = sim::machineParameterValues(small);
  CHECK(values.at("pe_rows") == 64);
  CHECK(values.at("pe_cols") == 32);
}

TEST_CASE("presets are embedded: they load from any working directory") {
  const auto here = std::filesystem::current_path();
  std::filesystem::current_path("/");
  CHECK(sim::loadMachine("trn1").geometry.sbufPartitionBytes == 192 * 1024);
  std::filesystem::current_path(here);
}

TEST_CASE("--set overrides one parameter - bad keys and values are named") {
  CHECK(sim::loadMachine("trn2", {"dma_latency_ns=1000"}).dmaLatencyNs == 1000);
  CHECK(sim::loadMachine("trn2", {"pe_throttle=false"}).peThrottle == false);
  CHECK(sim::loadMachine("trn1", {"sbuf_partition_bytes=100000"}).geometry.sbufPartitionBytes ==
        100000);
  CHECK(errorOf("trn2", {"dma_latncy_ns=5"})
            .find("unknown machine parameter 'dma_latncy_ns' (did you mean dma_latency_ns?)") !=
        std::string::npos);
  CHECK(errorOf("trn2", {"dma_latency_ns=abc"}).find("'abc' is not a number") != std::string::npos);
  CHECK(errorOf("trn2", {"dma_engines=1.5"}).find("dma_engines = 1.5: must be an integer") !=
        std::string::npos);
  CHECK(errorOf("trn2", {"pe_ghz=0"}).find("pe_ghz = 0: must be within [0.01, 100]") !=
        std::string::npos);
  CHECK(errorOf("trn2", {"pe_throttle=1"}).find("pe_throttle = 1: must be true or false") !=
        std::string::npos);
  CHECK(errorOf("trn2", {"novalue"}).find("expected KEY=VALUE") != std::string::npos);
}

TEST_CASE("a machine file overrides a base preset - every number needs a source") {
  const std::string good = writeTemp(
      R"({"name": "mine", "base": "trn1", "params": {"pe_ghz": {"value": 3.0, "source": "assumption: test"}}})");
  const sim::MachineConfig m = sim::loadMachine(good);
  CHECK(m.geometry.peGhz == 3.0);
  CHECK(m.geometry.sbufPartitionBytes == 192 * 1024);
  const std::string noSource = writeTemp(R"({"params": {"pe_ghz": {"value": 3.0}}})");
  CHECK(errorOf(noSource).find("pe_ghz: every number needs a \"source\"") != std::string::npos);
  const std::string unknown =
      writeTemp(R"({"params": {"warp_speed": {"value": 9, "source": "A1"}}})");
  CHECK(errorOf(unknown).find("unknown machine parameter 'warp_speed'") != std::string::npos);
  const std::string broken = writeTemp("{not json");
  CHECK(errorOf(broken).find("not valid JSON") != std::string::npos);
  std::remove(good.c_str());
  CHECK(errorOf("trn9").find("--machine trn9: not a preset (trn2, trn1)") != std::string::npos);
}

TEST_CASE("parameters out of scale are refused with their key and range - inf too") {
  for (const char* item : {"pe_ghz=1e-12", "pe_ghz=inf", "dma_latency_ns=1e15", "hbm_gbps=1e-300",
                           "throttle_start_fraction=1.5", "dma_queues=17", "sync_ghz=nan"}) {
    const std::string error = errorOf("trn2", {item});
    const std::string key(item, std::string(item).find('='));
    CAPTURE(item);
    CHECK(error.find("--set: " + key + " = ") == 0);
    CHECK(error.find("must be within [") != std::string::npos);
  }
  CHECK(errorOf("trn2", {"dma_latency_ns=1e15"}).find("must be within [0, 1e6]") !=
        std::string::npos);
  CHECK(errorOf("trn2", {"pe_ghz=inf"}).find("pe_ghz = inf: must be within [0.01, 100]") !=
        std::string::npos);
  // The bounds themselves are accepted.
  CHECK(sim::loadMachine("trn2", {"pe_ghz=0.01"}).geometry.peGhz == 0.01);
  CHECK(sim::loadMachine("trn2", {"dma_queues=16"}).geometry.dmaQueues == 16);
}

TEST_CASE("each parameter has one field: --set KEY changes that key's recorded value alone") {
  const nlohmann::json base = sim::machineParameterValues(sim::loadMachine("trn2"));
  for (const auto& [key, value] : base.items()) {
    // Half of each value (divisors stay divisors, fractions stay in range), 1 for 0, flags flipped.
    std::string text;
    if (value.is_boolean())
      text = value.get<bool>() ? "false" : "true";
    else if (value.is_number_integer())
      text = std::to_string(value.get<int64_t>() / 2);
    else
      text = fmt::format("{}", value.get<double>() == 0 ? 1.0 : value.get<double>() / 2);
    CAPTURE(key);
    const nlohmann::json changed =
        sim::machineParameterValues(sim::loadMachine("trn2", {key + "=" + text}));
    for (const auto& [other, was] : base.items())
      CHECK((changed.at(other) == was) == (other != key));
  }
}

TEST_CASE("values kernels read too are set on the geometry from their preset keys") {
  const sim::MachineConfig m = sim::loadMachine(
      "trn1", {"pe_ghz=2", "dve_ghz=0.5", "act_ghz=0.75", "pool_ghz=0.25", "mm_min_cycles=32",
               "ls_speedup=3", "ls_speedup_fp32=2", "fp32_matmul_factor=5", "min_ii_cycles=40",
               "gpsimd_start_cycles=99", "vector_perf_mode=true", "access_conflicts=false",
               "dma_engines=8", "dma_trigger_ns=700", "dma_transfer_overhead_ns=11",
               "dma_strided_hbm_efficiency=0.5", "hbm_gbps=400", "dma_engine_bytes_per_ns=20"});
  const isa::Geometry& g = m.geometry;
  CHECK(g.peGhz == 2);
  CHECK(g.vectorGhz == 0.5);
  CHECK(g.scalarGhz == 0.75);
  CHECK(g.gpsimdGhz == 0.25);
  CHECK(g.matmulMinCycles == 32);
  CHECK(g.lsSpeedup == 3);
  CHECK(g.lsSpeedupFp32 == 2);
  CHECK(g.fp32MatmulFactor == 5);
  CHECK(g.minIiCycles == 40);
  CHECK(g.gpsimdStartCycles == 99);
  CHECK(g.vectorPerfMode);
  CHECK_FALSE(g.accessConflicts);
  CHECK(g.dmaEngines == 8);
  CHECK(g.dmaTriggerNs == 700);
  CHECK(g.dmaTransferOverheadNs == 11);
  CHECK(g.dmaStridedHbmEfficiency == 0.5);
  // Derived after the overrides.
  CHECK(g.hbmBytesPerPeCycle == 200);
  CHECK(g.dmaBytesPerPeCycle == 80);
}
