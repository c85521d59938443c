// The timed run computes what the interpreter computes, bit for bit; timing-only keeps the times.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "isa/interpreter.h"
#include "isa/memory_state.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {

/// x [128, 64] and y [128, 32] in; out = relu(2 * (x^T y)) [64, 32] through DMA, PE, Vector,
/// Scalar, with semaphores on every cross-engine edge.
isa::Program pipeline() {
  isa::Program p;
  const int32_t x = addTensor(p, "x", {128, 64});
  const int32_t y = addTensor(p, "y", {128, 32});
  const int32_t out = addTensor(p, "out", {64, 32}, Dtype::Fp32, isa::TensorKind::Output);
  const int32_t q0 = addSemaphore(p, "q0"), q1 = addSemaphore(p, "q1"), pe = addSemaphore(p, "pe"),
                dve = addSemaphore(p, "dve"), act = addSemaphore(p, "act");
  Instruction lx = dma(0, Engine::Sync, sbuf(0, 128, 0, 64), hbm(x, 128, 64));
  signal(lx, q0, 16);
  p.instructions.push_back(lx);
  Instruction ly = dma(1, Engine::Scalar, sbuf(0, 128, 1024, 32), hbm(y, 128, 32));
  signal(ly, q1, 16);
  p.instructions.push_back(ly);
  Instruction mm = matmul(psum(0, 64, 0, 32), sbuf(0, 128, 0, 64), sbuf(0, 128, 1024, 32));
  waitFor(mm, q0, 16);
  waitFor(mm, q1, 16);
  signal(mm, pe);
  p.instructions.push_back(mm);
  Instruction scale =
      make(Opcode::TensorScalar, Engine::Vector, sbuf(0, 64, 2048, 32), {psum(0, 64, 0, 32)});
  scale.op0 = isa::AluOp::Multiply;
  scale.operand0.imm = 2.0f;
  waitFor(scale, pe, 1);
  signal(scale, dve);
  p.instructions.push_back(scale);
  Instruction relu =
      make(Opcode::Activation, Engine::Scalar, sbuf(0, 64, 4096, 32), {sbuf(0, 64, 2048, 32)});
  relu.act = isa::ActFn::Relu;
  waitFor(relu, dve, 1);
  signal(relu, act);
  p.instructions.push_back(relu);
  Instruction st = dma(2, Engine::Sync, hbm(out, 64, 32), sbuf(0, 64, 4096, 32));
  waitFor(st, act, 1);
  p.instructions.push_back(st);
  return p;
}

void fill(isa::MemoryState& mem, const isa::Program& p) {
  for (int32_t t = 0; t < 2; ++t) {
    std::vector<float> v(static_cast<size_t>(p.tensors[t].numElements()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = std::sin(0.37f * static_cast<float>(i + 1) * (t + 1));
    mem.setTensor(t, v);
  }
}

}  // namespace

TEST_CASE("outputs of the timed run equal the interpreter's bit for bit") {
  const isa::Program p = pipeline();
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::MemoryState reference(p, m.geometry), timed(p, m.geometry);
  fill(reference, p);
  fill(timed, p);
  isa::interpret(p, reference);
  const sim::SimResult r = sim::simulate(p, m, &timed);
  CHECK(r.races.empty());
  const std::vector<std::byte>& a = reference.hbm(2);
  const std::vector<std::byte>& b = timed.hbm(2);
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
  // Sanity: relu(2 * x^T y) at [0][0], independently.
  float acc = 0;
  const std::vector<float> x = reference.getTensor(0), y = reference.getTensor(1);
  for (int k = 0; k < 128; ++k) acc += x[k * 64] * y[k * 32];
  CHECK(timed.getTensor(2)[0] == doctest::Approx(std::max(0.0f, 2 * acc)).epsilon(1e-5));
}

TEST_CASE("timing-only gives exactly the times of the full run") {
  const isa::Program p = pipeline();
  for (const char* machine : {"trn2", "trn1"}) {
    const sim::MachineConfig m = sim::loadMachine(machine);
    isa::MemoryState mem(p, m.geometry);
    fill(mem, p);
    traces::EventLog full, fast;
    sim::SimOptions o;
    o.sink = &full;
    const sim::SimResult a = sim::simulate(p, m, &mem, o);
    o.sink = &fast;
    o.timingOnly = true;
    const sim::SimResult b = sim::simulate(p, m, nullptr, o);
    CHECK(a.totals.total.ns() == b.totals.total.ns());
    REQUIRE(full.instructions.size() == fast.instructions.size());
    for (size_t i = 0; i < full.instructions.size(); ++i) {
      CHECK(full.instructions[i].start.ns() == fast.instructions[i].start.ns());
      CHECK(full.instructions[i].end.ns() == fast.instructions[i].end.ns());
    }
    CHECK(a.totals.total.ns() > 2 * 1300);  // two dependent DMA latencies at least
  }
}
