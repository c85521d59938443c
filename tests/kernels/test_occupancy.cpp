// SBUF/PSUM occupancy: the builder's allocation records and the counter samples swept from event
// times.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "kernels/builder/kernel_builder.h"
#include "kernels/harness/occupancy.h"
#include "sim/machine_config.h"
#include "sim/simulator.h"

using neuronsim::isa::ActFn;
using neuronsim::isa::Dtype;
using neuronsim::isa::Geometry;
using neuronsim::isa::Space;
using neuronsim::kernels::AllocationRecord;
using neuronsim::kernels::KernelBuilder;
using neuronsim::kernels::Tile;
using neuronsim::traces::Counter;
using neuronsim::traces::CounterSample;
using neuronsim::traces::EventLog;

namespace {

/// Tiles a (64 B), b (128 B), c (64 B, a's bytes after its release), p (PSUM, 64 B) and an
/// untouched SBUF tile; instructions 0..6 as listed in the test below.
std::vector<AllocationRecord> tinyKernel() {
  KernelBuilder b("tiny", Geometry{});
  auto out = b.output("out", {128, 16}, Dtype::Fp32);
  Tile a = b.sbuf({128, 16}, Dtype::Fp32, "a");
  Tile t = b.sbuf({128, 16, 2}, Dtype::Fp32, "b");
  b.memset(a, 1.0f);                                 // 0: a
  b.tensorReduce(a, t, neuronsim::isa::AluOp::Add);  // 1: a, b (values never simulated)
  b.memset(t, 2.0f);                                 // 2: b
  b.release(a);
  Tile c = b.sbuf({128, 16}, Dtype::Fp32, "c");
  b.memset(c, 3.0f);                // 3: c
  b.dmaCopy(out, c, {.queue = 0});  // 4: c (DMA)
  Tile p = b.psum({128, 8}, Dtype::Fp32, "p");
  b.memset(p, 0.0f);                // 5: p
  b.activation(p, p, ActFn::Relu);  // 6: p
  b.sbuf({128, 4}, Dtype::Fp32, "unused");
  b.finish();
  return b.allocations();
}

void instruction(EventLog& log, int64_t index, double start, double end) {
  neuronsim::traces::InstructionEvent e;
  e.index = index;
  e.start = neuronsim::traces::Tick::fromNs(start);
  e.end = neuronsim::traces::Tick::fromNs(end);
  log.instruction(e);
}

std::vector<CounterSample> only(const std::vector<CounterSample>& samples, Counter counter) {
  std::vector<CounterSample> out;
  for (const CounterSample& s : samples)
    if (s.counter == counter) out.push_back(s);
  return out;
}

void checkSamples(const std::vector<CounterSample>& got,
                  const std::vector<std::pair<double, double>>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].at.ns() == want[i].first);
    CHECK(got[i].value == want[i].second);
  }
}

}  // namespace

TEST_CASE(
    "occupancy: the builder records each allocation's space, bytes and touching instructions") {
  const std::vector<AllocationRecord> records = tinyKernel();
  REQUIRE(records.size() == 5);
  CHECK(records[0].name == "a");
  CHECK(records[0].space == Space::Sbuf);
  CHECK(records[0].bytes == 64);
  CHECK(records[0].partitions == 128);
  CHECK(records[0].instructions == std::vector<int64_t>{0, 1});
  CHECK(records[1].bytes == 128);
  CHECK(records[1].offset == 64);
  CHECK(records[1].instructions == std::vector<int64_t>{1, 2});
  CHECK(records[2].offset == records[0].offset);  // c reuses a's bytes but is its own record
  CHECK(records[2].instructions == std::vector<int64_t>{3, 4});
  CHECK(records[3].space == Space::Psum);
  CHECK(records[3].bytes == 64);  // 32 B rounded up to the 64 B alignment
  CHECK(records[3].instructions == std::vector<int64_t>{5, 6});
  CHECK(records[3].firstInstruction() == 5);
  CHECK(records[3].lastInstruction() == 6);
  CHECK(records[4].instructions.empty());
  CHECK(records[4].firstInstruction() == -1);
}

TEST_CASE("occupancy: exact step samples from overlapping and disjoint lifetimes") {
  const std::vector<AllocationRecord> records = tinyKernel();
  EventLog log;
  instruction(log, 0, 0, 10);
  instruction(log, 1, 10, 30);
  instruction(log, 2, 30, 40);
  instruction(log, 3, 50, 60);
  instruction(log, 4, 60, 61);  // the DMA's trigger ...
  neuronsim::traces::DmaEvent dma;
  dma.index = 4;
  dma.issue = neuronsim::traces::Tick::fromNs(61);
  dma.start = neuronsim::traces::Tick::fromNs(62);
  dma.end = neuronsim::traces::Tick::fromNs(80);  // ... and its transfer, which ends c's life
  log.dma(dma);
  instruction(log, 5, 70, 75);
  instruction(log, 6, 65, 72);  // later in program order, earlier in time: p starts at 65

  const auto intervals = neuronsim::kernels::liveIntervals(records, log);
  REQUIRE(intervals.size() == 4);  // the untouched tile has none
  CHECK(intervals[2].startNs == 50);
  CHECK(intervals[2].endNs == 80);
  CHECK(intervals[3].startNs == 65);
  CHECK(intervals[3].endNs == 75);

  neuronsim::kernels::appendOccupancyCounters(log, records);
  // a [0,30] 64 B and b [10,40] 128 B overlap; c [50,80] 64 B comes after both.
  checkSamples(only(log.counters, Counter::SbufBytes),
               {{0, 64}, {10, 192}, {30, 128}, {40, 0}, {50, 64}, {80, 0}});
  checkSamples(only(log.counters, Counter::PsumBytes), {{0, 0}, {65, 64}, {75, 0}});
}

TEST_CASE(
    "occupancy: a tile ending when another starts gives one sample, and no tiles give zero "
    "tracks") {
  using neuronsim::kernels::LiveInterval;
  const std::vector<LiveInterval> touching = {{Space::Sbuf, 64, 5, 10}, {Space::Sbuf, 128, 10, 20}};
  const auto samples = neuronsim::kernels::occupancySamples(touching);
  checkSamples(only(samples, Counter::SbufBytes), {{0, 0}, {5, 64}, {10, 128}, {20, 0}});
  const auto empty = neuronsim::kernels::occupancySamples({});
  checkSamples(only(empty, Counter::SbufBytes), {{0, 0}});
  checkSamples(only(empty, Counter::PsumBytes), {{0, 0}});
}

TEST_CASE(
    "occupancy: a simulated run's intervals match its event times and its samples stay in bounds") {
  KernelBuilder b("sim", Geometry{});
  auto in = b.input("in", {128, 64}, Dtype::Fp32);
  auto out = b.output("out", {128, 64}, Dtype::Fp32);
  Tile x = b.sbuf({128, 64}, Dtype::Fp32, "x");
  Tile y = b.sbuf({128, 64}, Dtype::Fp32, "y");
  b.dmaCopy(x, in);
  b.activation(y, x, ActFn::Relu);
  b.release(x);
  b.dmaCopy(out, y);
  const auto program = b.finish();
  EventLog log;
  neuronsim::sim::SimOptions options;
  options.timingOnly = true;
  options.sink = &log;
  neuronsim::sim::simulate(program, neuronsim::sim::loadMachine("trn2"), nullptr, options);
  const auto intervals = neuronsim::kernels::liveIntervals(b.allocations(), log);
  REQUIRE(intervals.size() == 2);
  REQUIRE(log.dmas.size() == 2);
  CHECK(intervals[0].startNs <= log.dmas[0].start.ns());
  CHECK(intervals[0].endNs > log.dmas[0].end.ns());  // x lives until the activation reading it ends
  CHECK(intervals[1].endNs == log.dmas[1].end.ns());  // y lives until its store ends
  const auto sbuf = only(neuronsim::kernels::occupancySamples(intervals), Counter::SbufBytes);
  double peak = 0;
  for (size_t i = 0; i < sbuf.size(); ++i) {
    if (i) CHECK(sbuf[i].at > sbuf[i - 1].at);
    peak = std::max(peak, sbuf[i].value);
  }
  CHECK(peak == 512);  // x and y overlap during the activation
  CHECK(sbuf.back().value == 0);
}
