// The DMA split (D1), the trigger cost (D3) and the integer-time fluid model, without SystemC.
#include <doctest/doctest.h>

#include <map>

#include "sim/dma/dma_fluid.h"
#include "sim/dma/dma_plan.h"
#include "sim/dma/dma_trigger.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
struct Recorder : sim::DmaListener {
  std::map<int64_t, sim::Picos> started, finished;
  void transferStarted(int64_t tag, sim::Picos ps) override { started[tag] = ps; }
  void transferFinished(int64_t tag, sim::Picos ps) override { finished[tag] = ps; }
};
void runToIdle(sim::DmaFluid& fluid, Recorder& rec) {
  fluid.advanceTo(fluid.nowPs(), rec);
  for (int guard = 0; guard < 100000; ++guard) {
    const sim::Picos next = fluid.nextEventPs();
    if (next == sim::DmaFluid::kNever) return;
    fluid.advanceTo(next, rec);
  }
  FAIL("fluid model did not go idle");
}
Instruction load(int32_t queue, int32_t p0, int32_t rows, int64_t cols, Dtype dtype = Dtype::Fp32) {
  return dma(queue, Engine::Sync, sbuf(p0, rows, 0, cols, dtype), hbm(0, rows, cols, dtype));
}
/// ps of `bytes` at `rate` B/ns (the plan rounds engine time to whole fs).
sim::Picos psOf(double bytes, double rate) {
  return std::llround(bytes / rate * 1000.0);
}
/// A machine without the HBM cap or latency, so times are the engine arithmetic alone.
sim::MachineConfig bare(const char* preset, std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"hbm_gbps=100000", "dma_latency_ns=0"});
  return sim::loadMachine(preset, extra);
}
}  // namespace

TEST_CASE("each DMA engine serves a contiguous group of 8 partitions (D1)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  CHECK(sim::dmaEngineOfPartition(0, m) == 0);
  CHECK(sim::dmaEngineOfPartition(7, m) == 0);
  CHECK(sim::dmaEngineOfPartition(8, m) == 1);
  CHECK(sim::dmaEngineOfPartition(127, m) == 15);
  const sim::DmaPlan p128 = sim::planDma(load(0, 0, 128, 1024), m);
  REQUIRE(p128.parts.size() == 16);
  for (size_t i = 0; i < p128.parts.size(); ++i) {
    CHECK(p128.parts[i].engine == static_cast<int32_t>(i));
    CHECK(p128.parts[i].bytes == 8 * 1024 * 4);
    CHECK(p128.parts[i].descriptors == 8);
  }
  SUBCASE("a transfer over few partitions uses few engines, whatever its queue") {
    const sim::DmaPlan four = sim::planDma(load(9, 0, 4, 4096), m);
    REQUIRE(four.parts.size() == 1);
    CHECK(four.parts[0].engine == 0);
    CHECK(four.parts[0].rows == 4);
    const sim::DmaPlan one = sim::planDma(load(3, 77, 1, 16), m);
    REQUIRE(one.parts.size() == 1);
    CHECK(one.parts[0].engine == 9);
  }
  SUBCASE("an unaligned range splits at the group boundaries") {
    const sim::DmaPlan p = sim::planDma(load(0, 6, 20, 16), m);  // partitions 6..25
    REQUIRE(p.parts.size() == 4);
    CHECK(p.parts[0].engine == 0);
    CHECK(p.parts[0].rows == 2);
    CHECK(p.parts[1].rows == 8);
    CHECK(p.parts[2].rows == 8);
    CHECK(p.parts[3].engine == 3);
    CHECK(p.parts[3].rows == 2);
    CHECK(p.bytes == 20 * 16 * 4);
    CHECK(p.hbmBytes == 20 * 16 * 4);
  }
  SUBCASE("HBM to HBM spreads its rows over up to 16 engines") {
    const sim::DmaPlan p = sim::planDma(dma(0, Engine::Sync, hbm(1, 20, 16), hbm(0, 20, 16)), m);
    REQUIRE(p.parts.size() == 16);
    CHECK(p.parts[3].rows == 2);
    CHECK(p.parts[4].rows == 1);
    CHECK(p.hbmBytes == 2 * 20 * 16 * 4);
  }
}

TEST_CASE("engine time: bytes at the engine rate, descriptors at least 64 B, overhead after") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const sim::DmaPlan contiguous = sim::planDma(load(0, 0, 1, 256), m);
  CHECK(contiguous.descriptors == 1);
  CHECK(contiguous.parts[0].dataFs == std::llround(1024.0 / 23 * 1e6));
  CHECK(contiguous.parts[0].overheadFs == std::llround(m.geometry.dmaTransferOverheadNs * 1e6));
  SUBCASE("element-wise descriptors of a strided side each take 64 B of engine time") {
    Instruction strided = dma(0, Engine::Sync, sbuf(0, 1, 0, 256, Dtype::Fp32, 2), hbm(0, 1, 256));
    const sim::DmaPlan p = sim::planDma(strided, m);
    CHECK(p.descriptors == 256);
    CHECK(p.parts[0].dataFs == std::llround(256 * 64 / 23.0 * 1e6));
    const sim::MachineConfig noFloor = sim::loadMachine("trn2", {"dma_min_descriptor_bytes=4"});
    CHECK(sim::planDma(strided, noFloor).parts[0].dataFs == contiguous.parts[0].dataFs);
  }
  SUBCASE("a dtype conversion moves each element at the wider width") {
    Instruction cast = dma(0, Engine::Sync, sbuf(0, 1, 0, 256, Dtype::Bf16), hbm(0, 1, 256));
    const sim::DmaPlan p = sim::planDma(cast, m);
    CHECK(p.bytes == 512);
    CHECK(p.hbmBytes == 1024);
    CHECK(p.parts[0].dataFs == contiguous.parts[0].dataFs);
  }
  SUBCASE("DMA transposes run at their fraction of the copy rate") {
    Instruction t = make(Opcode::DmaTranspose, Engine::Sync, sbuf(0, 16, 0, 128, Dtype::Bf16),
                         {hbm(0, 128, 16, Dtype::Bf16)});
    t.dmaQueue = 0;
    const sim::DmaPlan p = sim::planDma(t, m);
    REQUIRE(p.parts.size() == 2);
    CHECK(p.parts[0].dataFs == std::llround(8 * 256 / (23 * 0.9) * 1e6));
  }
  CHECK(sim::contiguousRun(hbm(0, 4, 64)) == 64);
}

TEST_CASE("trigger cost: hardware path on Sync/Scalar, GpSimd generates swdge descriptors (D3)") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::DmaPlan plan = sim::planDma(load(0, 0, 128, 128, Dtype::Bf16), trn2);
  CHECK(sim::descriptorPath(Engine::Sync, trn2) == sim::DescriptorPath::Hardware);
  CHECK(sim::descriptorPath(Engine::Scalar, trn2) == sim::DescriptorPath::Hardware);
  CHECK(sim::descriptorPath(Engine::GpSimd, trn2) == sim::DescriptorPath::GpSimd);
  CHECK(sim::dmaTriggerPs(Engine::Sync, plan, trn2) == 600000);
  const double swdgeCycles = 150 + 128 * trn2.dmaSwdgeDescriptorCycles;
  CHECK(sim::dmaTriggerPs(Engine::GpSimd, plan, trn2) == std::llround(swdgeCycles / 1.2 * 1000));
  const sim::DmaPlan bigger = sim::planDma(load(0, 0, 128, 1024, Dtype::Bf16), trn2);
  const sim::DmaPlan strided = sim::planDma(
      dma(0, Engine::GpSimd, sbuf(0, 128, 0, 64, Dtype::Bf16, 2), hbm(0, 128, 64, Dtype::Bf16)),
      trn2);
  CHECK(sim::dmaTriggerPs(Engine::GpSimd, bigger, trn2) ==
        sim::dmaTriggerPs(Engine::GpSimd, plan, trn2));
  CHECK(sim::dmaTriggerPs(Engine::GpSimd, strided, trn2) >
        sim::dmaTriggerPs(Engine::GpSimd, plan, trn2));
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(sim::descriptorPath(Engine::GpSimd, trn1) == sim::DescriptorPath::Hardware);
  CHECK(sim::dmaTriggerPs(Engine::GpSimd, plan, trn1) == 46000);
}

TEST_CASE("one engine alone: data lands after bytes / rate, the engine stays busy the overhead") {
  const sim::MachineConfig m = bare("trn2");
  sim::DmaFluid fluid(m);
  Recorder rec;
  fluid.add(0, 100000, sim::planDma(load(0, 0, 1, 8192), m), 7);
  fluid.add(0, 100000, sim::planDma(load(0, 0, 1, 8192), m), 8);
  runToIdle(fluid, rec);
  const sim::Picos data = psOf(32768, 23),
                   overhead = psOf(m.geometry.dmaTransferOverheadNs * 23, 23);
  CHECK(rec.started[7] == 100000);
  CHECK(rec.finished[7] == 100000 + data);
  CHECK(rec.started[8] == 100000 + data + overhead);
  CHECK(rec.finished[8] == 100000 + 2 * data + overhead);
}

TEST_CASE("queues on the same engines share them round robin - a queue is FIFO") {
  const sim::MachineConfig m = bare("trn1", {"dma_transfer_overhead_ns=0"});
  const sim::Picos work = psOf(8 * 4096 * 4, 17);
  SUBCASE("two queues") {
    sim::DmaFluid fluid(m);
    Recorder rec;
    fluid.add(0, 0, sim::planDma(load(0, 0, 128, 4096), m), 1);
    fluid.add(1, 0, sim::planDma(load(1, 0, 128, 4096), m), 2);
    runToIdle(fluid, rec);
    CHECK(rec.finished[1] == 2 * work);
    CHECK(rec.finished[2] == 2 * work);
  }
  SUBCASE("one queue") {
    sim::DmaFluid fluid(m);
    Recorder rec;
    fluid.add(0, 0, sim::planDma(load(0, 0, 128, 4096), m), 1);
    fluid.add(0, 0, sim::planDma(load(0, 0, 128, 4096), m), 2);
    runToIdle(fluid, rec);
    CHECK(rec.finished[1] == work);
    CHECK(rec.started[2] == work);
    CHECK(rec.finished[2] == 2 * work);
  }
  SUBCASE("three queues, times that do not divide evenly stay exact and deterministic") {
    sim::DmaFluid fluid(m);
    Recorder rec;
    for (int q = 0; q < 3; ++q) fluid.add(q, 0, sim::planDma(load(q, 0, 1, 1000 + q), m), q);
    runToIdle(fluid, rec);
    CHECK(rec.finished[0] >= 3 * psOf(4000, 17));
    CHECK(rec.finished[0] <= 3 * psOf(4000, 17) + 1);
    CHECK(rec.finished[2] >= psOf(4000 * 3 + 8 + 4, 17));
    CHECK(rec.finished[2] <= psOf(4000 * 3 + 8 + 4, 17) + 2);
  }
}

TEST_CASE("a queue admits dma_queue_inflight transfers; the next one's latency starts on landing") {
  const sim::MachineConfig m =
      sim::loadMachine("trn2", {"hbm_gbps=100000", "dma_transfer_overhead_ns=0"});
  const sim::Picos latency = 1300000, data = psOf(8 * 1024 * 2, 23);  // data < latency
  sim::DmaFluid fluid(m);
  Recorder rec;
  for (int i = 0; i < 3; ++i)
    fluid.add(0, 0, sim::planDma(load(0, 0, 128, 1024, Dtype::Bf16), m), i);
  CHECK(fluid.inFlight() == 3);
  runToIdle(fluid, rec);
  CHECK(rec.started[0] == latency);
  CHECK(rec.finished[0] == latency + data);
  CHECK(rec.started[1] == latency + data);  // admitted at once, queued behind 0 on each engine
  CHECK(rec.finished[1] == latency + 2 * data);
  CHECK(rec.started[2] == latency + data + latency);  // admitted when 0 landed
  SUBCASE("a deeper queue overlaps more latencies") {
    const sim::MachineConfig deep = sim::loadMachine(
        "trn2", {"hbm_gbps=100000", "dma_transfer_overhead_ns=0", "dma_queue_inflight=3"});
    sim::DmaFluid f3(deep);
    Recorder r3;
    for (int i = 0; i < 3; ++i)
      f3.add(0, 0, sim::planDma(load(0, 0, 128, 1024, Dtype::Bf16), deep), i);
    runToIdle(f3, r3);
    CHECK(r3.started[2] == latency + 2 * data);
  }
  SUBCASE("other queues are not held") {
    sim::DmaFluid f(m);
    Recorder r;
    for (int i = 0; i < 3; ++i) f.add(i, 0, sim::planDma(load(i, 0, 1, 16), m), i);
    runToIdle(f, r);
    CHECK(r.started[2] == latency);
  }
}

TEST_CASE("all engines together are capped by the core's HBM bandwidth") {
  const sim::MachineConfig m =
      sim::loadMachine("trn2", {"hbm_gbps=200", "dma_latency_ns=0", "dma_transfer_overhead_ns=0"});
  sim::DmaFluid fluid(m);
  Recorder rec;
  fluid.add(0, 0, sim::planDma(load(0, 0, 128, 4096), m), 1);
  runToIdle(fluid, rec);
  const double bytes = 128.0 * 4096 * 4;
  CHECK(static_cast<double>(rec.finished[1]) / 1000 == doctest::Approx(bytes / 200).epsilon(1e-6));
  CHECK(fluid.activePs() == rec.finished[1]);
  SUBCASE("SBUF to SBUF does not touch HBM: no cap") {
    sim::DmaFluid onChipFluid(m);
    Recorder rec2;
    onChipFluid.add(
        0, 0,
        sim::planDma(dma(0, Engine::Sync, sbuf(0, 128, 0, 4096), sbuf(0, 128, 65536, 4096)), m), 1);
    runToIdle(onChipFluid, rec2);
    CHECK(rec2.finished[1] == psOf(8 * 4096 * 4, 23));
  }
}

TEST_CASE("HBM rows read at a stride may use only dma_strided_hbm_efficiency of the HBM share") {
  const sim::MachineConfig m =
      sim::loadMachine("trn2", {"hbm_gbps=200", "dma_latency_ns=0", "dma_transfer_overhead_ns=0",
                                "dma_strided_hbm_efficiency=0.25"});
  AccessPattern column = hbm(0, 128, 1024);  // 1024 of 4096 columns: rows 16 KiB apart
  column.partitionStep = 4096;
  CHECK(sim::hbmContiguous(hbm(0, 128, 1024)));
  CHECK_FALSE(sim::hbmContiguous(column));
  AccessPattern oneRow = hbm(0, 1, 1024);
  oneRow.partitionStep = 4096;
  CHECK(sim::hbmContiguous(oneRow));
  AccessPattern gappedRow = hbm(0, 1, 512);
  gappedRow.dims = {{2, 512}};
  CHECK_FALSE(sim::hbmContiguous(gappedRow));

  const sim::DmaPlan whole = sim::planDma(load(0, 0, 128, 1024), m);
  const sim::DmaPlan strided = sim::planDma(dma(0, Engine::Sync, sbuf(0, 128, 0, 1024), column), m);
  CHECK(whole.parts[0].hbmLoadBytes == whole.parts[0].hbmBytes);
  CHECK(strided.parts[0].hbmBytes == whole.parts[0].hbmBytes);
  CHECK(strided.parts[0].hbmLoadBytes == 4 * strided.parts[0].hbmBytes);
  SUBCASE("a store to strided rows is charged the same way") {
    const sim::DmaPlan store = sim::planDma(dma(0, Engine::Sync, column, sbuf(0, 128, 0, 1024)), m);
    CHECK(store.parts[0].hbmLoadBytes == 4 * store.parts[0].hbmBytes);
  }

  const double bytes = 128.0 * 1024 * 4;
  auto landing = [&](const sim::DmaPlan& plan) {
    sim::DmaFluid fluid(m);
    Recorder rec;
    fluid.add(0, 0, plan, 1);
    runToIdle(fluid, rec);
    return rec.finished[1];
  };
  const sim::Picos contiguousPs = landing(whole), stridedPs = landing(strided);
  CHECK(contiguousPs >= std::llround(bytes / 200 * 1000) - 16);
  CHECK(contiguousPs <= std::llround(bytes / 200 * 1000) + 16);
  CHECK(stridedPs >= std::llround(bytes / 50 * 1000) - 16);
  CHECK(stridedPs <= std::llround(bytes / 50 * 1000) + 16);
}
