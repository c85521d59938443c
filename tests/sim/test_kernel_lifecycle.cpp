// simulate() runs many times per process, ends on deadlock without hanging, and rethrows.
#include <doctest/doctest.h>

#include "isa/error.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

TEST_CASE("simulate runs three times in one process with identical results") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, 0, 512), sbuf(0, 128, 4096, 512)));
  p.instructions.push_back(copy(Engine::Scalar, sbuf(0, 128, 8192, 512), sbuf(0, 128, 12288, 512)));
  double first = -1;
  for (int run = 0; run < 3; ++run) {
    const sim::SimResult r = runTiming(p, m);
    if (first < 0) first = r.totals.total.ns();
    CHECK(r.totals.total.ns() == doctest::Approx(first));
    CHECK(r.totals.instructions == 2);
  }
  CHECK(first > 0);
}

TEST_CASE("deadlock names the waiting engine, semaphore, wanted and current value") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  const int32_t s = addSemaphore(p, "never");
  Instruction a = copy(Engine::Vector, sbuf(0, 1, 0, 1), sbuf(0, 1, 64, 1));
  waitFor(a, s, 2);
  p.instructions.push_back(a);
  Instruction b = copy(Engine::Scalar, sbuf(0, 1, 128, 1), sbuf(0, 1, 192, 1));
  signal(b, s, 1);
  p.instructions.push_back(b);
  std::string message;
  try {
    runTiming(p, m);
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("deadlock") != std::string::npos);
  CHECK(message.find("vector") != std::string::npos);
  CHECK(message.find("never >= 2") != std::string::npos);
  CHECK(message.find("(value 1)") != std::string::npos);
  // The kernel is usable again after a deadlock.
  isa::Program ok;
  ok.instructions.push_back(copy(Engine::Vector, sbuf(0, 1, 0, 1), sbuf(0, 1, 64, 1)));
  CHECK(runTiming(ok, m).totals.instructions == 1);
}

TEST_CASE("a semaphore index outside the program is an error, not a crash") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  Instruction a = copy(Engine::Vector, sbuf(0, 1, 0, 1), sbuf(0, 1, 64, 1));
  waitFor(a, 3, 1);
  p.instructions.push_back(a);
  CHECK_THROWS_AS(runTiming(p, m), Error);
}

TEST_CASE("a malformed instruction becomes an Error naming it") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  isa::Program p;
  p.instructions.push_back(copy(Engine::Vector, sbuf(0, 1, 0, 1), sbuf(0, 1, 64, 1)));
  p.instructions.push_back(
      make(Opcode::NcMatmul, Engine::Tensor, psum(0, 1, 0, 1), {sbuf(0, 1, 0, 1)}));
  std::string message;
  try {
    runTiming(p, m);
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("instruction 1 (nc_matmul on tensor)") != std::string::npos);
}

TEST_CASE("an empty program takes no time") {
  const sim::SimResult r = runTiming(isa::Program{}, sim::loadMachine("trn1"));
  CHECK(r.totals.total.ns() == 0);
  CHECK(r.totals.instructions == 0);
  CHECK(r.races.empty());
}
