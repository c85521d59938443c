// The DMA split (D1) and the fluid bandwidth model, without SystemC.
#include <doctest/doctest.h>

#include <map>

#include "sim/dma/dma_fluid.h"
#include "sim/dma/dma_plan.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
struct Recorder : sim::DmaListener {
  std::map<int64_t, double> started, finished;
  void transferStarted(int64_t tag, double ns) override { started[tag] = ns; }
  void transferFinished(int64_t tag, double ns) override { finished[tag] = ns; }
};
void runToIdle(sim::DmaFluid& fluid, Recorder& rec) {
  fluid.advanceTo(fluid.nowNs(), rec);
  for (int guard = 0; guard < 100000; ++guard) {
    const double next = fluid.nextEventNs();
    if (next == sim::DmaFluid::kNever) return;
    fluid.advanceTo(next, rec);
  }
  FAIL("fluid model did not go idle");
}
Instruction load(int32_t queue, int32_t rows, int64_t cols) {
  return dma(queue, Engine::Sync, sbuf(0, rows, 0, cols), hbm(0, rows, cols));
}
}  // namespace

TEST_CASE("a transfer splits across up to 16 engines by partition") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const sim::DmaPlan p128 = sim::planDma(load(0, 128, 1024), m);
  REQUIRE(p128.parts.size() == 16);
  for (const sim::DmaPart& part : p128.parts) {
    CHECK(part.bytes == 8 * 1024 * 4);
    CHECK(part.descriptors == 8);
  }
  CHECK(sim::planDma(load(0, 8, 1024), m).parts.size() == 8);
  CHECK(sim::planDma(load(0, 1, 1024), m).parts.size() == 1);
  const sim::DmaPlan p20 = sim::planDma(load(0, 20, 16), m);
  REQUIRE(p20.parts.size() == 16);
  CHECK(p20.parts[3].bytes == 2 * 16 * 4);
  CHECK(p20.parts[4].bytes == 1 * 16 * 4);
  CHECK(p20.bytes == 20 * 16 * 4);
  CHECK(p20.hbmBytes == 20 * 16 * 4);
}

TEST_CASE("descriptors are contiguous chunks - a strided side cuts them per element") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const sim::DmaPlan contiguous = sim::planDma(load(0, 1, 256), m);
  CHECK(contiguous.descriptors == 1);
  CHECK(contiguous.parts[0].workNs == doctest::Approx(1024.0 / 23 + 11));
  Instruction strided = dma(0, Engine::Sync, sbuf(0, 1, 0, 256, Dtype::Fp32, 2), hbm(0, 1, 256));
  CHECK(sim::planDma(strided, m).descriptors == 256);
  CHECK(sim::contiguousRun(hbm(0, 4, 64)) == 64);
}

TEST_CASE("one engine alone moves its bytes at the per-engine rate plus descriptor cost") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  sim::DmaFluid fluid(m);
  Recorder rec;
  fluid.add(0, 100, sim::planDma(load(0, 1, 8192), m), 7);
  runToIdle(fluid, rec);
  CHECK(rec.started[7] == doctest::Approx(100));
  CHECK(rec.finished[7] == doctest::Approx(100 + 32768.0 / 23 + 11));
}

TEST_CASE("queues on the same engines share them round robin - a queue is FIFO") {
  const sim::MachineConfig m = sim::loadMachine("trn1");  // HBM 410 > 16 x 17: no cap
  const double work = 8 * 4096 * 4 / 17.0 + 8 * 15;
  {
    sim::DmaFluid fluid(m);
    Recorder rec;
    fluid.add(0, 0, sim::planDma(load(0, 128, 4096), m), 1);
    fluid.add(1, 0, sim::planDma(load(1, 128, 4096), m), 2);
    runToIdle(fluid, rec);
    CHECK(rec.finished[1] == doctest::Approx(2 * work));
    CHECK(rec.finished[2] == doctest::Approx(2 * work));
  }
  {
    sim::DmaFluid fluid(m);
    Recorder rec;
    fluid.add(0, 0, sim::planDma(load(0, 128, 4096), m), 1);
    fluid.add(0, 0, sim::planDma(load(0, 128, 4096), m), 2);
    runToIdle(fluid, rec);
    CHECK(rec.finished[1] == doctest::Approx(work));
    CHECK(rec.started[2] == doctest::Approx(work));
    CHECK(rec.finished[2] == doctest::Approx(2 * work));
  }
}

TEST_CASE("all engines together are capped by the core's HBM bandwidth") {
  sim::MachineConfig m = sim::loadMachine("trn2", {"hbm_gbps=200"});
  sim::DmaFluid fluid(m);
  Recorder rec;
  fluid.add(0, 0, sim::planDma(load(0, 128, 4096), m), 1);
  runToIdle(fluid, rec);
  const double bytes = 128.0 * 4096 * 4;
  CHECK(rec.finished[1] == doctest::Approx(bytes / 200).epsilon(0.001));
  // SBUF to SBUF does not touch HBM: no cap.
  sim::DmaFluid onChip(m);
  Recorder rec2;
  onChip.add(
      0, 0, sim::planDma(dma(0, Engine::Sync, sbuf(0, 128, 0, 4096), sbuf(0, 128, 65536, 4096)), m),
      1);
  runToIdle(onChip, rec2);
  CHECK(rec2.finished[1] == doctest::Approx(8 * 4096 * 4 / 23.0 + 8 * 11));
}
