// The software-pipelining idioms: runPipelined's load/compute order, and Pipeline emitting the
// same order when stopped and resumed between items.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/builder/pipeline.h"

using namespace neuronsim::kernels;

namespace {

/// "L<item>/<set>" and "C<item>/<set>" in emission order.
struct Recorder {
  std::vector<std::string> events;
  Pipeline::Step load() {
    return [this](int64_t i, int s) { events.push_back(fmt::format("L{}/{}", i, s)); };
  }
  Pipeline::Step compute() {
    return [this](int64_t i, int s) { events.push_back(fmt::format("C{}/{}", i, s)); };
  }
};

}  // namespace

TEST_CASE("pipeline: runPipelined loads sets - 1 items ahead") {
  Recorder two;
  runPipelined(3, 2, two.load(), two.compute());
  CHECK(two.events == std::vector<std::string>{"L0/0", "L1/1", "C0/0", "L2/0", "C1/1", "C2/0"});
  Recorder one;
  runPipelined(2, 1, one.load(), one.compute());
  CHECK(one.events == std::vector<std::string>{"L0/0", "C0/0", "L1/0", "C1/0"});
  Recorder three;
  runPipelined(2, 3, three.load(), three.compute());
  CHECK(three.events == std::vector<std::string>{"L0/0", "L1/1", "C0/0", "C1/1"});
}

TEST_CASE("pipeline: a Pipeline resumed in pieces emits what runPipelined emits") {
  for (int sets = 1; sets <= 3; ++sets)
    for (int64_t count : {0, 1, 2, 5}) {
      CAPTURE(sets);
      CAPTURE(count);
      Recorder whole, pieces;
      runPipelined(count, sets, whole.load(), whole.compute());
      Pipeline p(count, sets, pieces.load(), pieces.compute());
      p.prime();
      p.prime();  // once only
      for (int64_t end : {int64_t{0}, int64_t{1}, int64_t{1}, int64_t{3}, count + 2}) {
        const int64_t before = p.next();
        p.emitThrough(end);
        CHECK(p.next() == std::min(std::max(end, before), count));
      }
      CHECK(pieces.events == whole.events);
      CHECK(p.next() == count);
    }
}
