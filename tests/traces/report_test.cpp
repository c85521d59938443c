// Report analyses on the hand-built fixture: opcode times, stalls, critical path, warnings.
#include "traces/report.h"

#include <doctest/doctest.h>

#include <fstream>

#include "fixture.h"
#include "isa/error.h"
#include "traces/chrome_trace.h"

using namespace neuronsim;

namespace {

/// The fixture written to a trace and read back, as `report` sees it.
traces::TraceModel savedFixture(traces::EventLog log = fixture::log(),
                                const traces::MachineFacts& machine = {}) {
  fixture::TempFile file("report.json");
  traces::writeChromeTrace(file.str(), fixture::program(), log, fixture::summary(), machine);
  return traces::loadTraceModel(file.str());
}

double stall(const std::vector<traces::StallTime>& rows, const std::string& track,
             const std::string& cause) {
  for (const auto& r : rows)
    if (r.track == track && r.cause == cause) return r.ns;
  return -1;
}

}  // namespace

TEST_CASE("trace model read back from a file keeps every span's fields") {
  const auto model = savedFixture();
  REQUIRE(model.spans.size() == 6);
  CHECK(model.minStartNs == doctest::Approx(0));
  CHECK(model.maxEndNs == doctest::Approx(5000));
  const traces::Span* mm = nullptr;
  for (const auto& s : model.spans)
    if (!s.isDma && s.index == 2) mm = &s;
  REQUIRE(mm);
  CHECK(mm->track == "tensor");
  CHECK(mm->startNs == doctest::Approx(3000));
  CHECK(mm->endNs == doctest::Approx(3500));
  CHECK(mm->waitedOn == 1);
  CHECK(mm->semaphore == "sem_vector");
  CHECK(model.counters.size() == 1);
  CHECK(model.counters[0].points.size() == 3);
}

TEST_CASE("opcode times per track") {
  const auto rows = traces::opcodeTimes(savedFixture());
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].track == "tensor");
  CHECK(rows[0].opcode == "nc_matmul");
  CHECK(rows[0].ns == doctest::Approx(500));
  CHECK(rows[2].track == "sync");
  CHECK(rows[2].count == 2);
  CHECK(rows[2].ns == doctest::Approx(200));
  CHECK(rows[3].track == "dma.q0");
  CHECK(rows[3].ns == doctest::Approx(1000));
}

TEST_CASE("stall time by cause per engine and DMA latency per queue") {
  const auto rows = traces::stallTimes(savedFixture());
  CHECK(stall(rows, "vector", "semaphore") == doctest::Approx(2400));
  CHECK(stall(rows, "tensor", "semaphore") == doctest::Approx(3000));
  CHECK(stall(rows, "sync", "semaphore") == doctest::Approx(3400));
  CHECK(stall(rows, "dma.q0", "dma_latency") == doctest::Approx(1300));
  CHECK(stall(rows, "dma.q1", "dma_latency") == doctest::Approx(1300));
  CHECK(rows.size() == 5);
}

TEST_CASE("stalls of different causes on one engine are kept apart") {
  traces::EventLog log;
  auto a = fixture::inst(0, isa::Engine::Tensor, isa::Opcode::NcMatmul, 0, 100, 200);
  a.stall = traces::StallCause::Throttle;
  auto b = fixture::inst(1, isa::Engine::Tensor, isa::Opcode::NcMatmul, 200, 250, 300);
  b.stall = traces::StallCause::EngineBusy;
  auto c = fixture::inst(2, isa::Engine::Tensor, isa::Opcode::NcMatmul, 300, 330, 400);
  c.stall = traces::StallCause::Throttle;
  log.instruction(a);
  log.instruction(b);
  log.instruction(c);
  const auto rows = traces::stallTimes(savedFixture(log));
  CHECK(stall(rows, "tensor", "throttle") == doctest::Approx(130));
  CHECK(stall(rows, "tensor", "engine_busy") == doctest::Approx(50));
}

TEST_CASE("longest stalls, longest first, with their semaphore and releaser") {
  const auto model = savedFixture();
  const auto longest = traces::longestStalls(model, 2);
  REQUIRE(longest.size() == 2);
  // sync #3 waited 3400 ns, tensor #2 3000 ns, vector #1 2400 ns
  CHECK(model.spans[longest[0]].index == 3);
  CHECK(model.spans[longest[1]].index == 2);
  CHECK(traces::longestStalls(model, 10).size() == 3);
  const std::string text = traces::reportText(model);
  CHECK(text.find("semaphore on sem_vector >= 1, released by #1") != std::string::npos);
}

TEST_CASE("critical path walks semaphore edges, DMA triggers and latencies, totalled by resource") {
  const auto model = savedFixture();
  const auto path = traces::criticalPath(model);
  // Back from q1's store: its 100 ns, the DMA latency (1300, inferred from the transfers), the
  // store trigger released by the matmul, the matmul released by the add, the add released by
  // q0's load landing, the load's latency, and the load trigger.
  using R = traces::Resource;
  const std::vector<std::pair<R, double>> pieces{
      {R::DmaTrigger, 100}, {R::FixedLatency, 1300}, {R::Dma, 1000},          {R::Vector, 600},
      {R::Tensor, 500},     {R::DmaTrigger, 100},    {R::FixedLatency, 1300}, {R::Dma, 100}};
  REQUIRE(path.pieces.size() == pieces.size());
  double cursor = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    CAPTURE(k);
    CHECK(path.pieces[k].resource == pieces[k].first);
    CHECK(path.pieces[k].fromNs == doctest::Approx(cursor));
    CHECK(path.pieces[k].toNs - path.pieces[k].fromNs == doctest::Approx(pieces[k].second));
    cursor = path.pieces[k].toNs;
  }
  CHECK(path.events == 6);
  CHECK(path.totalNs == doctest::Approx(5000));
  CHECK(path.resourceNs[static_cast<size_t>(R::FixedLatency)] == doctest::Approx(2600));
  CHECK(path.resourceNs[static_cast<size_t>(R::Dma)] == doctest::Approx(1100));
  CHECK(path.resourceNs[static_cast<size_t>(R::DmaTrigger)] == doctest::Approx(200));
  CHECK(path.bound == R::FixedLatency);
}

TEST_CASE("critical path follows a queue when a transfer waited behind the previous one") {
  traces::EventLog log;
  log.instruction(fixture::inst(0, isa::Engine::Sync, isa::Opcode::DmaCopy, 0, 0, 50));
  log.instruction(fixture::inst(3, isa::Engine::Sync, isa::Opcode::DmaCopy, 50, 50, 100));
  log.dma(fixture::dma(0, 0, 50, 1000, 3000, 65536));
  log.dma(fixture::dma(3, 0, 100, 3000, 4000, 65536));
  const auto model = savedFixture(log);
  const auto path = traces::criticalPath(model);
  // trigger #0 [0,50], latency [50,1000] (950 ns: the smaller issue-to-start), load #0, load #3
  REQUIRE(path.pieces.size() == 4);
  CHECK(model.spans[path.pieces[0].span].index == 0);
  CHECK(!model.spans[path.pieces[0].span].isDma);
  CHECK(path.pieces[1].resource == traces::Resource::FixedLatency);
  CHECK(path.pieces[1].toNs - path.pieces[1].fromNs == doctest::Approx(950));
  CHECK(model.spans[path.pieces[2].span].index == 0);
  CHECK(model.spans[path.pieces[3].span].index == 3);
  CHECK(path.bound == traces::Resource::Dma);
  CHECK(path.resourceNs[static_cast<size_t>(traces::Resource::Dma)] == doctest::Approx(3000));
}

TEST_CASE("warnings: small DMAs, PE gaps that re-trigger the throttle, uninitialized reads") {
  auto log = fixture::log();
  log.instruction(fixture::inst(4, isa::Engine::Tensor, isa::Opcode::NcMatmul, 3500, 7000, 7100));
  log.instruction(fixture::inst(5, isa::Engine::Tensor, isa::Opcode::NcMatmul, 7100, 7200, 7300));
  log.uninitializedRead({1, "src1 sbuf p0-127 bytes 0-511"});
  const auto model = savedFixture(log, fixture::machine(true));
  const auto warnings = traces::traceWarnings(model);
  std::string all;
  for (const auto& w : warnings) all += w + "\n";
  CAPTURE(all);
  // q0's load: 65536 B / 128 partitions = 512 B < 2 KiB; q1's store 4096 B per partition is fine.
  CHECK(all.find("1 DMA transfers move under 2048 bytes per partition (65536 bytes") !=
        std::string::npos);
  // tensor gap 3500 -> 7000 = 3.5 us > 3 us; 7100 -> 7200 is not.
  CHECK(all.find("1 PE idle gaps over 3000 ns (3.500 us") != std::string::npos);
  CHECK(all.find("instruction 1 reads uninitialized memory: src1 sbuf") != std::string::npos);
  // the new events end at 7300 but the summary says 5000
  CHECK(all.find("differs from the summary") != std::string::npos);
}

TEST_CASE(
    "the throttle rule follows the machine the trace recorded: never on Trn1 or an unknown "
    "machine") {
  auto log = fixture::log();
  log.instruction(fixture::inst(4, isa::Engine::Tensor, isa::Opcode::NcMatmul, 3500, 7000, 7100));
  auto gaps = [&](const traces::MachineFacts& machine) {
    int n = 0;
    for (const auto& w : traces::traceWarnings(savedFixture(log, machine)))
      n += w.find("PE idle gaps") != std::string::npos;
    return n;
  };
  CHECK(gaps(fixture::machine(true)) == 1);
  CHECK(gaps(fixture::machine(false)) == 0);
  CHECK(gaps({}) == 0);
  // the recorded window sets the threshold: a 3.5 us gap is inside a 4 us window
  auto wide = fixture::machine(true);
  wide.params["throttle_window_ns"] = 4000;
  CHECK(gaps(wide) == 0);
}

TEST_CASE("no warnings on a clean trace") {
  traces::EventLog log;
  log.instruction(fixture::inst(0, isa::Engine::Tensor, isa::Opcode::NcMatmul, 0, 0, 5000));
  CHECK(traces::traceWarnings(savedFixture(log)).empty());
}

TEST_CASE("report text has every section") {
  const std::string text = traces::reportText(savedFixture());
  for (const char* part :
       {"fixture on trn2", "verdict: bound by fixed latency (52.0% of the critical path)",
        "critical path by resource", "what if", "engine time", "top opcodes by time", "nc_matmul",
        "DMA efficiency", "critical path chain", "warnings:", "DMA transfers move under"}) {
    CAPTURE(part);
    CHECK(text.find(part) != std::string::npos);
  }
}

TEST_CASE("streamed and DOM readers of a trace agree") {
  auto log = fixture::log();
  log.uninitializedRead({2, "src0 sbuf p0-127"});
  fixture::TempFile file("readers.json");
  traces::writeChromeTrace(file.str(), fixture::program(), log, fixture::summary());
  const auto streamed = traces::loadTraceModel(file.str());
  const auto dom = traces::traceModel(nlohmann::json::parse(std::ifstream(file.path)));
  CHECK(streamed.summary == dom.summary);
  CHECK(streamed.summary["kernel"] == "fixture");
  CHECK(streamed.tracks == dom.tracks);
  CHECK(streamed.tracks.size() == 7);
  CHECK(streamed.uninitializedReads == dom.uninitializedReads);
  REQUIRE(streamed.spans.size() == dom.spans.size());
  for (size_t i = 0; i < dom.spans.size(); ++i) {
    CAPTURE(i);
    CHECK(streamed.spans[i].index == dom.spans[i].index);
    CHECK(streamed.spans[i].tid == dom.spans[i].tid);
    CHECK(streamed.spans[i].startNs == dom.spans[i].startNs);
    CHECK(streamed.spans[i].assembly == dom.spans[i].assembly);
    CHECK(streamed.spans[i].semaphore == dom.spans[i].semaphore);
    CHECK(streamed.spans[i].waitsKnown == dom.spans[i].waitsKnown);
    REQUIRE(streamed.spans[i].waits.size() == dom.spans[i].waits.size());
    for (size_t k = 0; k < dom.spans[i].waits.size(); ++k) {
      CHECK(streamed.spans[i].waits[k].producer == dom.spans[i].waits[k].producer);
      CHECK(streamed.spans[i].waits[k].ns == dom.spans[i].waits[k].ns);
    }
  }
  // the DMA transfers carry their trigger's assembly, written once in the file
  CHECK(streamed.spans.back().isDma);
  CHECK(streamed.spans.back().assembly == streamed.spans[3].assembly);
}

TEST_CASE("a trace with a malformed event or without the neuronsim section is an error") {
  fixture::TempFile file("malformed.json");
  {
    std::ofstream(file.path)
        << R"({"traceEvents":[{"ph":"X","dur":1}],"neuronsim":{"summary":{}}})";
  }
  CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str()), doctest::Contains("without ts"), Error);
  { std::ofstream(file.path) << R"({"traceEvents":[{"ph":"X","ts":0,"dur":1}]})"; }
  CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str()),
                       doctest::Contains("no neuronsim section"), Error);
  { std::ofstream(file.path) << R"([{"ph":"X","ts":0,"dur":1}])"; }
  CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str()), doctest::Contains("no traceEvents"),
                       Error);
  CHECK_THROWS_WITH_AS(traces::loadTraceModel(file.str() + ".absent"), doctest::Contains(".absent"),
                       Error);
}
