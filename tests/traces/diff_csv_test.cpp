// diff deltas and the CSV instruction table.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "fixture.h"
#include "traces/chrome_trace.h"
#include "traces/csv.h"
#include "traces/diff.h"

using namespace neuronsim;

namespace {

const traces::DiffRow* row(const std::vector<traces::DiffRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("diff compares totals, per-track and per-opcode time and count") {
  auto a = traces::traceModel(fixture::program(), fixture::log());
  a.summary = fixture::summary(5000);
  auto logB = fixture::log();
  logB.instructions[2].end = traces::Tick::fromNs(3250);  // matmul twice as fast
  logB.instruction(fixture::inst(4, isa::Engine::Scalar, isa::Opcode::Activation, 0, 0, 300));
  auto b = traces::traceModel(fixture::program(), logB);
  b.summary = fixture::summary(4000);
  const auto diff = traces::diffTraces(a, b);

  const auto* total = row(diff.totals, "total_ns");
  REQUIRE(total);
  CHECK(total->delta() == doctest::Approx(-1000));
  CHECK(total->percent() == doctest::Approx(-20.0));
  const auto* tensor = row(diff.trackTime, "tensor");
  REQUIRE(tensor);
  CHECK(tensor->a == doctest::Approx(500));
  CHECK(tensor->b == doctest::Approx(250));
  CHECK(tensor->percent() == doctest::Approx(-50.0));
  const auto* scalar = row(diff.opcodeCount, "scalar activation");
  REQUIRE(scalar);
  CHECK(scalar->a == 0);
  CHECK(scalar->b == 1);
  CHECK(std::isinf(scalar->percent()));
  const auto* sync = row(diff.opcodeCount, "sync dma_copy");
  REQUIRE(sync);
  CHECK(sync->delta() == 0);
  CHECK(sync->percent() == 0);

  std::vector<std::string> order;
  for (const auto& r : diff.trackTime) order.push_back(r.name);
  CHECK(order ==
        std::vector<std::string>{"tensor", "vector", "scalar", "sync", "dma.q0", "dma.q1"});

  const std::string text = traces::diffText(diff, "a.json", "b.json");
  CHECK(text.find("A = a.json") != std::string::npos);
  CHECK(text.find("-20.0%") != std::string::npos);
  CHECK(text.find("-50.0%") != std::string::npos);
  CHECK(text.find("new") != std::string::npos);
}

TEST_CASE("csv has a header and one row per instruction and transfer in start order") {
  fixture::TempFile file("table.csv");
  traces::writeInstructionCsv(file.str(), fixture::program(), fixture::log());
  std::ifstream in(file.path);
  std::stringstream text;
  text << in.rdbuf();
  const auto rows = lines(text.str());
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == traces::kCsvHeader);
  // starts: 0 (sync #0), 1400 (q0 #0), 2400 (vector #1), 3000 (tensor #2), 3500 (sync #3), 4900 (q1
  // #3)
  CHECK(rows[1].rfind("instruction,0,sync,dma_copy,0,0,100,100,0,none,,0,-1,", 0) == 0);
  CHECK(rows[2].rfind(
            "dma,0,dma.q0,dma_copy,100,1400,2400,1000,1300,dma_latency,,0,-1,0,65536,0,512,", 0) ==
        0);
  CHECK(rows[3].rfind("instruction,1,vector,tensor_tensor,0,2400,3000,600,2400,semaphore,sem_q0,1,"
                      "0,576,196608,0,0,",
                      0) == 0);
  CHECK(rows[4].rfind("instruction,2,tensor,nc_matmul,0,3000,3500,500,3000,semaphore,sem_vector,1,"
                      "1,1200,0,16777216,",
                      0) == 0);
  CHECK(rows[6].rfind("dma,3,dma.q1,", 0) == 0);
}

TEST_CASE("csv from a saved trace matches the csv from the run") {
  fixture::TempFile trace("csv_trace.json");
  traces::writeChromeTrace(trace.str(), fixture::program(), fixture::log(), fixture::summary());
  const std::string fromTrace = traces::instructionCsv(traces::loadTraceModel(trace.str()));
  const std::string fromRun =
      traces::instructionCsv(traces::traceModel(fixture::program(), fixture::log()));
  CHECK(fromTrace == fromRun);
}

TEST_CASE("csv quotes fields with commas and quotes") {
  traces::TraceModel model;
  traces::Span s;
  s.index = 7;
  s.track = "vector";
  s.opcode = "tensor_copy";
  s.assembly = "tensor_copy dst=[1,2] \"x\"";
  model.spans.push_back(s);
  const auto rows = lines(traces::instructionCsv(model));
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].find(",\"tensor_copy dst=[1,2] \"\"x\"\"\"") != std::string::npos);
}
