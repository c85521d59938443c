// The buffered JSON writer: escaping, number forms, buffer flushes, errors; track naming.
#include "traces/json_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "fixture.h"
#include "isa/error.h"
#include "traces/track_layout.h"

using namespace neuronsim;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("json writer escapes strings and writes numbers that parse back exactly") {
  fixture::TempFile file("writer.json");
  {
    traces::JsonWriter out(file.str());
    out.beginArray().value("a\"b\\c\nd\te\x01").value(0.1).value(1e-7).value(int64_t{-42});
    out.value(std::numeric_limits<double>::infinity()).value(std::nan("")).endArray();
    out.close();
  }
  const std::string text = slurp(file.path);
  CHECK(text == "[\"a\\\"b\\\\c\\nd\\te\\u0001\",0.1,1e-07,-42,0,0]");
  const auto parsed = nlohmann::json::parse(text);
  CHECK(parsed[0] == "a\"b\\c\nd\te\x01");
  CHECK(parsed[2].get<double>() == 1e-7);
}

TEST_CASE("json writer places every comma and colon: nested objects, arrays, empty containers") {
  traces::JsonWriter out;
  out.beginObject()
      .field("a", 1)
      .key("b")
      .beginArray()
      .endArray()
      .key("c")
      .beginObject()
      .endObject();
  out.key("d")
      .beginArray()
      .beginObject()
      .field("x", true)
      .field("y", "z")
      .endObject()
      .value(2.5)
      .endArray();
  out.array("e", std::vector<int64_t>{1, 2, 3}).key("f").json("{\"g\":null}").endObject();
  const std::string text = out.take();
  CHECK(text == R"({"a":1,"b":[],"c":{},"d":[{"x":true,"y":"z"},2.5],"e":[1,2,3],"f":{"g":null}})");
  CHECK(nlohmann::json::parse(text)["d"][0]["y"] == "z");
}

TEST_CASE(
    "json writer rejects a value without a key, a key outside an object and unbalanced closes") {
  traces::JsonWriter out;
  out.beginObject();
  CHECK_THROWS_AS(out.value(1), std::logic_error);
  CHECK_THROWS_AS(out.endArray(), std::logic_error);
  out.key("k");
  CHECK_THROWS_AS(out.key("again"), std::logic_error);
  CHECK_THROWS_AS(out.endObject(), std::logic_error);
  traces::JsonWriter array;
  array.beginArray();
  CHECK_THROWS_AS(array.key("k"), std::logic_error);
}

TEST_CASE("json writer flushes across its 1 MiB buffer") {
  fixture::TempFile file("big.json");
  const std::string chunk(300000, 'x');
  {
    traces::JsonWriter out(file.str());
    out.beginArray(true);
    for (int i = 0; i < 8; ++i) out.value(chunk);
    out.endArray();
  }
  const auto parsed = nlohmann::json::parse(slurp(file.path));
  REQUIRE(parsed.size() == 8);
  CHECK(parsed[7].get<std::string>().size() == 300000);
}

TEST_CASE("json writer names the path it cannot open") {
  CHECK_THROWS_WITH_AS(traces::JsonWriter("/nonexistent-dir/x.json"),
                       doctest::Contains("/nonexistent-dir/x.json"), Error);
}

TEST_CASE("track names and ranks") {
  CHECK(traces::trackName(traces::engineTid(isa::Engine::Tensor)) == "tensor");
  CHECK(traces::trackName(traces::engineTid(isa::Engine::Sync)) == "sync");
  CHECK(traces::trackName(traces::queueTid(15)) == "dma.q15");
  CHECK(traces::trackName(traces::queueTid(3) + 2 * traces::kLaneTidStride) == "dma.q3 #3");
  CHECK(traces::trackName(traces::kKernelTid) == "kernel");
  CHECK(traces::trackRank("tensor") < traces::trackRank("sync"));
  CHECK(traces::trackRank("sync") < traces::trackRank("dma.q0"));
  CHECK(traces::trackRank("dma.q2") < traces::trackRank("dma.q10"));
}
