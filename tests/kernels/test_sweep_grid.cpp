// The sweep grid: axis parsing, cartesian order, shards that partition the grid, and the
// schedule parameters' sweep candidates.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

#include "isa/error.h"
#include "kernels/registry.h"
#include "kernels/sweep/sweep_grid.h"

using neuronsim::Error;
using namespace neuronsim::kernels;

namespace {

KernelSpec sweepSpec() {
  KernelSpec spec;
  spec.name = "toy";
  spec.params = {{"kernel_size", ParamType::Int3, "2", "window", {}},
                 scheduleParam("tile", ParamType::Int, "tile", {"64", "128"}),
                 scheduleParam("engine", ParamType::Enum, "engine", {}, {"vector", "scalar"}),
                 scheduleParam("bufs", ParamType::Int, "buffers", {})};
  return spec;
}

}  // namespace

TEST_CASE("sweep grid: schedule parameters declare auto first and their candidates") {
  const KernelSpec spec = sweepSpec();
  CHECK(spec.params[1].schedule);
  CHECK(spec.params[1].defaultValue == kAuto);
  CHECK(sweepCandidates(spec.params[1]) == std::vector<std::string>{"auto", "64", "128"});
  CHECK(sweepCandidates(spec.params[2]) == std::vector<std::string>{"auto", "vector", "scalar"});
  CHECK(sweepCandidates(spec.params[3]).empty());
  CHECK(sweepCandidates(spec.params[0]).empty());
  const auto axes = scheduleAxes(spec);
  REQUIRE(axes.size() == 2);  // bufs declares no candidates
  CHECK(axes[0].param == "tile");
  CHECK(axes[1].param == "engine");
  KernelSpec none;
  none.name = "plain";
  CHECK_THROWS_WITH_AS(scheduleAxes(none),
                       "sweep: plain declares no schedule parameters to sweep; name some with "
                       "--param NAME=v1,v2,...",
                       Error);
}

TEST_CASE("sweep grid: axes parse, the last axis varies fastest, int3 values take colons") {
  const KernelSpec spec = sweepSpec();
  const SweepAxis window = parseAxis(spec, "kernel-size=2,1:2:3");
  CHECK(window.param == "kernel_size");
  CHECK(window.values == std::vector<std::string>{"2", "1,2,3"});
  CHECK(parseAxis(spec, "tile").values == std::vector<std::string>{"auto", "64", "128"});
  const auto grid = expandGrid(spec, {window, parseAxis(spec, "tile=auto,64,128")});
  REQUIRE(grid.size() == 6);
  CHECK(grid[1].params ==
        std::vector<std::pair<std::string, std::string>>{{"kernel_size", "2"}, {"tile", "64"}});
  CHECK(grid[3].params[0].second == "1,2,3");
  CHECK(grid[3].params[1].second == "auto");
  CHECK_THROWS_WITH_AS(expandGrid(spec, {parseAxis(spec, "tile=64,big")}),
                       "toy: parameter tile takes integers or auto, not 'big'", Error);
  CHECK_THROWS_WITH_AS(parseAxis(spec, "bufs"),
                       "sweep: --param bufs needs values (NAME=v1,v2,...): toy declares no "
                       "candidates for it",
                       Error);
}

TEST_CASE("sweep grid: the shards of a grid partition it, each point in exactly one") {
  const KernelSpec spec = sweepSpec();
  const auto grid =
      expandGrid(spec, {parseAxis(spec, "tile=1,2,3,4,5,6,7"), parseAxis(spec, "engine")});
  for (int64_t n = 1; n <= 25; n += 4) {
    std::multiset<int64_t> seen;
    for (int64_t i = 1; i <= n; ++i)
      for (const SweepPoint& p : shardOf(grid, parseShard(fmt::format("{}/{}", i, n))))
        seen.insert(p.index);
    CHECK(seen.size() == grid.size());
    CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == grid.size());
  }
  CHECK(shardOf(grid, parseShard("2/3")).front().index == 1);
  for (const char* bad : {"0/1", "2/1", "1", "1/0", "x/2", "1/2/3", "1 /2"})
    CHECK_THROWS_AS(parseShard(bad), Error);
}
