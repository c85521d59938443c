// Larger synthetic runs: the trace, model and viewer stay consistent; writes the CLI fixture on
// request.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "fixture.h"
#include "synthetic.h"
#include "traces/chrome_trace.h"
#include "traces/report.h"
#include "traces/viewer/viewer.h"

using namespace neuronsim;

TEST_CASE("a synthetic pipeline of 2000 tiles round-trips through the trace file") {
  const auto run = synthetic::makeRun(2000);
  fixture::TempFile file("scale.json");
  traces::writeChromeTrace(file.str(), run.program, run.log, run.summary);
  const auto model = traces::loadTraceModel(file.str());
  CHECK(model.spans.size() == 12000);
  CHECK(model.maxEndNs - model.minStartNs ==
        doctest::Approx(run.summary["total_ns"].get<double>()));
  // loads on 4 queues take 5.7 us each and arrive every 1.425 us on average: the loads bound it
  const auto path = traces::criticalPath(model);
  CHECK(path.bound == traces::Resource::Dma);
  double sum = 0;
  for (double ns : path.resourceNs) sum += ns;
  CHECK(sum == doctest::Approx(path.totalNs));
}

TEST_CASE("write the CLI fixture trace when NEURONSIM_WRITE_FIXTURE names a path") {
  const char* out = std::getenv("NEURONSIM_WRITE_FIXTURE");
  if (!out) return;
  const char* tiles = std::getenv("NEURONSIM_FIXTURE_TILES");
  const auto run = synthetic::makeRun(tiles ? std::atoi(tiles) : 40);
  traces::writeChromeTrace(out, run.program, run.log, run.summary, fixture::machine(true));
}

TEST_CASE("viewer data embeds every track and escapes script-breaking text") {
  auto run = synthetic::makeRun(3);
  run.summary["kernel"] = "</script><b>";
  fixture::TempFile file("viewer.json");
  traces::writeChromeTrace(file.str(), run.program, run.log, run.summary);
  const auto model = traces::loadTraceModel(file.str());
  const std::string html = traces::viewerHtml(model, "t</script>");
  CHECK(html.find("/*NEURONSIM_DATA*/") == std::string::npos);
  CHECK(html.find("t</script>") == std::string::npos);
  const auto begin = html.find("<script type=\"application/json\" id=\"data\">");
  REQUIRE(begin != std::string::npos);
  const auto start = html.find('>', begin) + 1;
  const auto end = html.find("</script>", start);
  const auto data = nlohmann::json::parse(html.substr(start, end - start));
  CHECK(data["title"] == "t</script>");
  std::vector<std::string> names;
  for (const auto& t : data["tracks"]) names.push_back(t["name"]);
  const std::vector<std::string> expected{"critical path", "tensor", "vector", "scalar",
                                          "gpsimd",        "sync",   "dma.q0", "dma.q1",
                                          "dma.q2",        "dma.q4", "dma.q5"};
  CHECK(names == expected);
  CHECK(data["tracks"][1]["s"].size() == 3);
  CHECK(data["tracks"][4]["s"].size() == 0);
  // the critical path row: segments that tile [0, end of the last event], bound by a load queue
  const auto& critical = data["tracks"][0];
  CHECK(critical["critical"] == true);
  CHECK(critical["bound"] == "DMA");
  CHECK(data["analysisText"].get<std::string>().find("verdict: bound by DMA") != std::string::npos);
  double cursor = 0;
  for (size_t k = 0; k < critical["s"].size(); ++k) {
    CHECK(critical["s"][k].get<double>() == doctest::Approx(cursor));
    cursor += critical["d"][k].get<double>();
  }
  CHECK(cursor == doctest::Approx(run.summary["total_ns"].get<double>()));
  CHECK(data["counters"].size() == 2);
  CHECK(data["total"].get<double>() == doctest::Approx(run.summary["total_ns"].get<double>()));
}
