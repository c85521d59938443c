// Engines in the SystemC core: overlap, semaphore ordering, matmul II, throttle, port conflicts.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "sim/cost/clock.h"
#include "sim/cost/compute_cost.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
const traces::InstructionEvent& eventOf(const traces::EventLog& log, int64_t index) {
  for (const auto& e : log.instructions)
    if (e.index == index) return e;
  FAIL("no event for instruction ", index);
  return log.instructions.front();
}
bool overlap(const traces::InstructionEvent& a, const traces::InstructionEvent& b) {
  return a.start.ns() < b.end.ns() - 1e-9 && b.start.ns() < a.end.ns() - 1e-9;
}
}  // namespace

TEST_CASE("independent engines run in parallel") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 960), sbuf(0, 128, 8192, 960)));
  p.instructions.push_back(
      copy(Engine::Scalar, sbuf(0, 128, 16384, 1200), sbuf(0, 128, 24576, 1200)));
  traces::EventLog log;
  const sim::SimResult r = runTiming(p, m, &log);
  CHECK(eventOf(log, 0).start.ns() == 0.0);
  CHECK(eventOf(log, 1).start.ns() == 0.0);
  CHECK(eventOf(log, 0).end.ns() == doctest::Approx(1000.0));  // 960 cycles at 0.96 GHz
  CHECK(eventOf(log, 1).end.ns() == doctest::Approx(1000.0));  // 1200 cycles at 1.2 GHz
  CHECK(r.totals.engines[1].busy.ns() == doctest::Approx(1000.0));
  CHECK(r.totals.engines[2].busy.ns() == doctest::Approx(1000.0));
}

TEST_CASE("a wait holds until the semaphore reaches its value: not at N-1, at N") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const double issue = 512 / 0.96, latency = 220 / 0.96;
  for (int64_t want : {1, 2}) {
    isa::Program p;
    const int32_t s = addSemaphore(p, "vec");
    Instruction a = copy(Engine::Vector, sbuf(0, 128, 0, 512), sbuf(0, 128, 8192, 512));
    signal(a, s);
    p.instructions.push_back(a);
    Instruction b = copy(Engine::Vector, sbuf(0, 128, 16384, 512), sbuf(0, 128, 24576, 512));
    signal(b, s);
    p.instructions.push_back(b);
    Instruction c = copy(Engine::Scalar, sbuf(0, 128, 32768, 64), sbuf(0, 128, 0, 64));
    waitFor(c, s, want);
    p.instructions.push_back(c);
    traces::EventLog log;
    runTiming(p, m, &log);
    const traces::InstructionEvent& e = eventOf(log, 2);
    CHECK(e.start.ns() == doctest::Approx(want * issue + latency + handoffNs(m)));
    CHECK(e.stall == traces::StallCause::Semaphore);
    CHECK(e.waitSemaphore == s);
    CHECK(e.waitValue == want);
    CHECK(e.waitedOnInstruction == want - 1);
  }
}

TEST_CASE("a read signal releases the waiter at the producer's start") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  const int32_t s = addSemaphore(p, "read");
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 960), sbuf(0, 128, 8192, 960)));
  Instruction b = copy(Engine::Vector, sbuf(0, 128, 16384, 96), sbuf(0, 128, 24576, 96));
  signal(b, s, 1, isa::SignalAt::Read);
  p.instructions.push_back(b);
  Instruction c = copy(Engine::Scalar, sbuf(0, 128, 32768, 64), sbuf(0, 128, 40960, 64));
  waitFor(c, s, 1);
  p.instructions.push_back(c);
  traces::EventLog log;
  runTiming(p, m, &log);
  CHECK(eventOf(log, 2).start.ns() == doctest::Approx(1000.0 + handoffNs(m)));
}

TEST_CASE("dependent tiny activations on one engine are ~MIN_II + pipeline latency apart (A1)") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  isa::Program chain, independent;
  for (int i = 0; i < 4; ++i) {
    chain.instructions.push_back(make(Opcode::Activation, Engine::Scalar,
                                      sbuf(0, 1, 64 * (i + 1), 1), {sbuf(0, 1, 64 * i, 1)}));
    independent.instructions.push_back(make(Opcode::Activation, Engine::Scalar,
                                            sbuf(0, 1, 1024 + 64 * i, 1), {sbuf(0, 1, 64 * i, 1)}));
  }
  traces::EventLog a, b;
  runTiming(chain, m, &a);
  runTiming(independent, m, &b);
  CHECK(eventOf(a, 3).start.ns() - eventOf(a, 2).start.ns() ==
        doctest::Approx((64 + 100 + 120) / 1.4));
  CHECK(eventOf(a, 3).stall == traces::StallCause::EngineBusy);
  CHECK(eventOf(a, 3).waitedOnInstruction == 2);
  CHECK(eventOf(b, 3).start.ns() - eventOf(b, 2).start.ns() == doctest::Approx(64 / 1.4));
}

TEST_CASE("matmul stream: II per instruction, background LoadStationary, fp32 4x") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  for (Dtype dtype : {Dtype::Bf16, Dtype::Fp32}) {
    for (bool alternate : {false, true}) {
      isa::Program p;
      for (int i = 0; i < 10; ++i) {
        const int64_t stationaryAt = alternate && i % 2 ? 32768 : 0;
        p.instructions.push_back(matmul(psum(0, 128, (i % 4) * 2048, 512),
                                        sbuf(0, 128, stationaryAt, 128, dtype),
                                        sbuf(0, 128, 65536, 512, dtype)));
      }
      traces::EventLog log;
      const sim::SimResult r = runTiming(p, m, &log);
      const double factor = dtype == Dtype::Fp32 ? 4 : 1;
      CHECK(eventOf(log, 5).end.ns() - eventOf(log, 5).start.ns() ==
            doctest::Approx(512 * factor / 2.8));
      // Only the first LoadStationary is exposed.
      CHECK(eventOf(log, 9).end.ns() == doctest::Approx((32 + 5120) * factor / 2.8));
      CHECK(r.totals.flops == 10 * 2 * 128 * 128 * 512);
      CHECK(r.totals.total.ns() == doctest::Approx(((32 + 5120) * factor + 64) / 2.8));
    }
  }
}

TEST_CASE("LoadStationary is exposed after a semaphore stall, hidden otherwise") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  for (bool stalled : {false, true}) {
    isa::Program p;
    const int32_t s = addSemaphore(p, "ready");
    Instruction v =
        copy(Engine::Vector, sbuf(0, 128, 0, 1120), sbuf(0, 128, 8192, 1120));  // 1000 ns
    signal(v, s);
    p.instructions.push_back(v);
    p.instructions.push_back(matmul(psum(0, 128, 0, 512), sbuf(0, 128, 16384, 128, Dtype::Bf16),
                                    sbuf(0, 128, 32768, 512, Dtype::Bf16)));
    Instruction mm = matmul(psum(0, 128, 2048, 512), sbuf(0, 128, 20480, 128, Dtype::Bf16),
                            sbuf(0, 128, 32768, 512, Dtype::Bf16));
    if (stalled) waitFor(mm, s, 1);
    p.instructions.push_back(mm);
    traces::EventLog log;
    runTiming(p, m, &log);
    CHECK(eventOf(log, 1).end.ns() == doctest::Approx((32 + 512) / 2.8));
    const double released = 1000.0 + 220 / 1.12 + handoffNs(m);
    if (stalled) {
      CHECK(eventOf(log, 2).start.ns() == doctest::Approx(released));
      CHECK(eventOf(log, 2).end.ns() == doctest::Approx(released + (32 + 512) / 2.8));
    } else {
      CHECK(eventOf(log, 2).end.ns() == doctest::Approx((32 + 1024) / 2.8));
    }
  }
}

TEST_CASE("trn2 throttle: the first matmul runs at the ramp's rate, full rate after ~3 us") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::MachineConfig flat = sim::loadMachine("trn2", {"pe_throttle=false"});
  isa::Program p;
  for (int i = 0; i < 40; ++i)
    p.instructions.push_back(matmul(psum(0, 128, (i % 4) * 2048, 512),
                                    sbuf(0, 128, 0, 128, Dtype::Bf16),
                                    sbuf(0, 128, 65536, 512, Dtype::Bf16)));
  traces::EventLog log, flatLog;
  runTiming(p, trn2, &log);
  runTiming(p, flat, &flatLog);
  const double ls = 32 / 2.4, mm = 512 / 2.4;
  // 0.5x + x^2/12000 = 213.33 ns of work gives x = 400 ns.
  CHECK(eventOf(log, 0).end.ns() == doctest::Approx(ls + 400.0));
  CHECK(eventOf(flatLog, 0).end.ns() == doctest::Approx(ls + mm));
  const traces::InstructionEvent& late = eventOf(log, 39);
  CHECK(late.start.ns() > ls + 3000);
  CHECK(late.end.ns() - late.start.ns() == doctest::Approx(mm));
  // Ramp work: 0.75 * 3000 ns of full-rate work over the first 3 us.
  CHECK(eventOf(log, 39).end.ns() - eventOf(flatLog, 39).end.ns() ==
        doctest::Approx(750.0).epsilon(0.01));
}

TEST_CASE(
    "trn1 serializes Vector with GpSimd on SBUF and Vector with Scalar on PSUM - trn2 does not") {
  isa::Program sbufPair;
  sbufPair.instructions.push_back(
      copy(Engine::Vector, sbuf(0, 128, 0, 512), sbuf(0, 128, 8192, 512)));
  sbufPair.instructions.push_back(make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 16384, 512)));
  isa::Program psumPair;
  psumPair.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 512), psum(0, 128, 0, 512)));
  psumPair.instructions.push_back(
      make(Opcode::Activation, Engine::Scalar, sbuf(0, 128, 8192, 512), {psum(0, 128, 4096, 512)}));
  isa::Program noConflict;
  noConflict.instructions.push_back(
      copy(Engine::Vector, sbuf(0, 128, 0, 512), psum(0, 128, 0, 512)));
  noConflict.instructions.push_back(make(Opcode::Activation, Engine::Scalar,
                                         sbuf(0, 128, 8192, 512), {sbuf(0, 128, 16384, 512)}));
  for (const isa::Program* p : {&sbufPair, &psumPair, &noConflict}) {
    traces::EventLog trn1, trn2;
    runTiming(*p, sim::loadMachine("trn1"), &trn1);
    runTiming(*p, sim::loadMachine("trn2"), &trn2);
    CHECK(overlap(trn2.instructions[0], trn2.instructions[1]));
    CHECK(overlap(trn1.instructions[0], trn1.instructions[1]) == (p == &noConflict));
    if (p != &noConflict) {
      const auto& later = trn1.instructions[0].start.ns() > trn1.instructions[1].start.ns()
                              ? trn1.instructions[0]
                              : trn1.instructions[1];
      CHECK(later.stall == traces::StallCause::AccessConflict);
    }
  }
}

TEST_CASE("totals count SBUF bytes, flops and instructions per engine") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 100), sbuf(0, 64, 8192, 200)));
  p.instructions.push_back(matmul(psum(0, 64, 0, 32), sbuf(0, 128, 16384, 64, Dtype::Bf16),
                                  sbuf(0, 128, 32768, 32, Dtype::Bf16)));
  const sim::SimResult r = runTiming(p, m);
  CHECK(r.totals.sbufWriteBytes == 128 * 100 * 4);
  CHECK(r.totals.sbufReadBytes == 64 * 200 * 4 + 128 * 64 * 2 + 128 * 32 * 2);
  CHECK(r.totals.flops == 2 * 128 * 64 * 32);
  CHECK(r.totals.engines[0].instructions == 1);
  CHECK(r.totals.engines[1].instructions == 1);
  CHECK(r.totals.instructions == 2);
}

TEST_CASE("long semaphore histories (folded timelines) keep exact wait times") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  const int32_t s = addSemaphore(p, "vec");
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    Instruction a = copy(Engine::Vector, sbuf(0, 128, 0, 96), sbuf(0, 128, 8192, 96));
    signal(a, s);
    p.instructions.push_back(a);
    Instruction b = copy(Engine::Scalar, sbuf(0, 128, 16384, 64), sbuf(0, 128, 24576, 64));
    waitFor(b, s, i + 1);
    p.instructions.push_back(b);
  }
  traces::EventLog log;
  runTiming(p, m, &log);
  // Vector issues every 100 ns (96 cycles at 0.96 GHz); each result lands 220 cycles later.
  const double latency = 220 / 0.96;
  for (int i : {0, 4095, 4096, 8191, n - 1}) {
    const traces::InstructionEvent& e = eventOf(log, 2 * i + 1);
    CHECK(e.start.ns() == doctest::Approx(100.0 * (i + 1) + latency + handoffNs(m)));
  }
}

TEST_CASE("a run past the simulated-time limit stops with an error naming the instruction") {
  // 65535 x 65535 x 10 step-0 elements per partition at the slowest allowed clock: ~4e10
  // cycles of 100 ns, far past one hour.
  const sim::MachineConfig slow = sim::loadMachine("trn2", {"dve_ghz=0.01"});
  isa::Program p;
  Instruction big = copy(Engine::Vector, sbuf(0, 1, 0, 1), sbuf(0, 1, 64, 1));
  big.dst.dims = {{0, 65535}, {0, 65535}, {0, 10}};
  big.srcs[0].dims = big.dst.dims;
  p.instructions.push_back(big);
  std::string error;
  try {
    runTiming(p, slow);
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error.find(
            "instruction 0 (tensor_copy on vector) would end past the simulated-time limit") == 0);
  big.dst.dims = {{0, 65535}, {0, 10}};  // 65 ms: fine
  big.srcs[0].dims = big.dst.dims;
  p.instructions[0] = big;
  CHECK(runTiming(p, slow).totals.total > traces::Tick::fromNs(6e7));
}

TEST_CASE("active time is the union of execution spans up to the last result (R2 ActiveTime)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const double issue = 960 / 0.96, latency = 220 / 0.96, longScalar = 6000 / 1.2;
  isa::Program p;
  const int32_t s = addSemaphore(p, "scalar");
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 960), sbuf(0, 128, 8192, 960)));
  p.instructions.push_back(
      copy(Engine::Vector, sbuf(0, 128, 16384, 960), sbuf(0, 128, 24576, 960)));
  Instruction slow = copy(Engine::Scalar, sbuf(0, 128, 32768, 6000), sbuf(0, 128, 57344, 6000));
  signal(slow, s);
  p.instructions.push_back(slow);
  Instruction late = copy(Engine::Vector, sbuf(0, 128, 90112, 960), sbuf(0, 128, 98304, 960));
  waitFor(late, s, 1);
  p.instructions.push_back(late);
  traces::EventLog log;
  const sim::SimResult r = runTiming(p, m, &log);
  const traces::EngineTotals& vector = r.totals.engines[static_cast<size_t>(Engine::Vector)];
  CHECK(eventOf(log, 3).start.ns() > 2 * issue + latency);  // a gap before the waiting copy
  CHECK(vector.busy.ns() == doctest::Approx(3 * issue));
  // Back to back, the first copy's pipeline tail lies inside the second's span; the waiting
  // copy's span stands alone, tail included; the semaphore wait is not active.
  CHECK(vector.active.ns() == doctest::Approx(2 * issue + latency + issue + latency));
  const traces::EngineTotals& scalar = r.totals.engines[static_cast<size_t>(Engine::Scalar)];
  CHECK(scalar.active.ns() == doctest::Approx(longScalar + 220 / 1.2));
}

TEST_CASE("a throttled matmul is held back at the head and runs at full rate: a Throttle stall") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  for (int i = 0; i < 3; ++i)
    p.instructions.push_back(matmul(psum(0, 128, (i % 4) * 2048, 512),
                                    sbuf(0, 128, 0, 128, Dtype::Bf16),
                                    sbuf(0, 128, 65536, 512, Dtype::Bf16)));
  traces::EventLog log;
  const sim::SimResult r = runTiming(p, m, &log);
  // Busy is the work; active time runs from where each was held (it runs slowed down there, R2)
  // to the last result.
  const traces::EngineTotals& pe = r.totals.engines[static_cast<size_t>(Engine::Tensor)];
  const double ls = 32 / 2.4, mm = 512 / 2.4, latency = 64 / 2.4;
  CHECK(pe.busy.ns() == doctest::Approx(ls + 3 * mm));
  CHECK(pe.active.ns() == doctest::Approx(eventOf(log, 2).end.ns() + latency));
  CHECK(pe.active.ns() > pe.busy.ns() + 100);
  const traces::Tick work = sim::engineClock(Engine::Tensor, m).toTicks(sim::Cycles{512});
  for (int i = 0; i < 3; ++i) {
    const traces::InstructionEvent& e = eventOf(log, i);
    CAPTURE(i);
    CHECK(e.stall == traces::StallCause::Throttle);
    CHECK(e.start > e.ready);
    // The first one's span also holds its exposed LoadStationary.
    if (i > 0) CHECK(e.end - e.start == work);
  }
  // Without the throttle nothing is held back.
  traces::EventLog flat;
  runTiming(p, sim::loadMachine("trn2", {"pe_throttle=false"}), &flat);
  for (const auto& e : flat.instructions) CHECK(e.stall != traces::StallCause::Throttle);
}

TEST_CASE(
    "two engines signal one semaphore: the earlier landing releases the waiter, registered last") {
  const sim::MachineConfig m = sim::loadMachine("trn2", {"pe_throttle=false"});
  isa::Program p;
  const int32_t g = addSemaphore(p, "gpsimd");
  const int32_t s = addSemaphore(p, "shared");
  // Vector registers its increment first (it needs nothing), landing late.
  Instruction slow = copy(Engine::Vector, sbuf(0, 128, 0, 1920), sbuf(0, 128, 8192, 1920));
  signal(slow, s);
  p.instructions.push_back(slow);
  // Scalar can register only after GpSimd, but lands much earlier.
  Instruction ms = make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 16384, 64));
  signal(ms, g);
  p.instructions.push_back(ms);
  Instruction quick = copy(Engine::Scalar, sbuf(0, 128, 24576, 64), sbuf(0, 128, 32768, 64));
  waitFor(quick, g, 1);
  signal(quick, s);
  p.instructions.push_back(quick);
  Instruction mm = matmul(psum(0, 128, 0, 512), sbuf(0, 128, 40960, 128, Dtype::Bf16),
                          sbuf(0, 128, 49152, 512, Dtype::Bf16));
  waitFor(mm, s, 1);
  p.instructions.push_back(mm);
  traces::EventLog log;
  runTiming(p, m, &log);
  const traces::Tick handoff =
      sim::engineClock(Engine::Sync, m).toTicks(sim::Cycles{m.semaphoreHandoffCycles});
  const traces::Tick scalarLatency =
      sim::engineClock(Engine::Scalar, m).toTicks(sim::pipelineLatency(Engine::Scalar, m));
  CHECK(eventOf(log, 3).start == eventOf(log, 2).end + scalarLatency + handoff);
  CHECK(eventOf(log, 3).waitedOnInstruction == 2);
  CHECK(eventOf(log, 3).start < eventOf(log, 0).end);
}
