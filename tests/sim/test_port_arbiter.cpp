// Port arbitration (NC-v2 ports, NC-v3 PSUM banks): the plain C++ grant rule and the timed runs
// that follow it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>

#include "isa/footprint.h"
#include "sim/core/port_arbiter.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;
using sim::PortArbiter;
using traces::Tick;
using Verdict = PortArbiter::Verdict;

namespace {
Tick ns(int64_t v) {
  return Tick::fromPs(v * 1000);
}
/// Every rival's next start bound is `bound`.
auto bounds(Tick bound) {
  return [bound](Engine) { return bound; };
}

/// The PSUM banks (bit per bank) `inst`'s first source reads (0 when it is not in PSUM).
uint64_t psumBanksRead(const Instruction& inst, const isa::Geometry& g) {
  if (inst.srcs.empty() || inst.srcs.front().space != Space::Psum) return 0;
  const isa::Footprint f = isa::footprintOf(inst.srcs.front());
  return g.psumBankMask(f.byteBegin, f.byteEnd);
}

std::map<int64_t, traces::InstructionEvent> eventsByIndex(const traces::EventLog& log) {
  std::map<int64_t, traces::InstructionEvent> events;
  for (const auto& e : log.instructions) events[e.index] = e;
  return events;
}
}  // namespace

TEST_CASE("the grant waits for conflicting claims and is final only once no rival can come first") {
  PortArbiter arbiter(true, false);
  arbiter.claim(Engine::GpSimd, true, 0, ns(100));
  arbiter.next(Engine::GpSimd, 7);
  // Vector on SBUF conflicts with GpSimd's claim; Scalar on SBUF does not.
  CHECK(arbiter.grant(Engine::Vector, true, false, 5, ns(10), bounds(ns(200))).at == ns(100));
  CHECK(arbiter.grant(Engine::Scalar, true, false, 5, ns(10), bounds(ns(0))).at == ns(10));
  CHECK(arbiter.grant(Engine::Scalar, true, false, 5, ns(10), bounds(ns(0))).verdict ==
        Verdict::Granted);
  CHECK(arbiter.grant(Engine::Vector, true, false, 5, ns(10), bounds(ns(200))).verdict ==
        Verdict::Granted);
  CHECK(arbiter.grant(Engine::Vector, true, false, 5, ns(10), bounds(ns(99))).verdict ==
        Verdict::Earlier);
  // A rival that may start at the grant time itself: the lower instruction index goes first.
  CHECK(arbiter.grant(Engine::Vector, true, false, 5, ns(10), bounds(ns(100))).verdict ==
        Verdict::Granted);
  CHECK(arbiter.grant(Engine::Vector, true, false, 9, ns(10), bounds(ns(100))).verdict ==
        Verdict::Tie);
  arbiter.wait(Engine::GpSimd, 7);
  CHECK(arbiter.grant(Engine::Vector, true, false, 9, ns(10), bounds(ns(100))).verdict ==
        Verdict::Behind);
  // PSUM: Vector against Scalar only, and all of PSUM is one port (bank 0 against bank 3).
  arbiter.claim(Engine::Scalar, false, 0b1, ns(300));
  CHECK(arbiter.grant(Engine::Vector, true, 0b1000, 5, ns(10), bounds(ns(400))).at == ns(300));
  CHECK(arbiter.grant(Engine::GpSimd, true, 0b1, 5, ns(10), bounds(ns(0))).at == ns(10));
  // NC-v3 without the bank rule: no conflicts.
  PortArbiter off(false, false);
  CHECK_FALSE(off.arbitrates(Engine::Vector));
  off.claim(Engine::Scalar, true, 0b1, ns(100));
  const PortArbiter::Grant g = off.grant(Engine::Vector, true, 0b1, 5, ns(10), bounds(ns(0)));
  CHECK(g.at == ns(10));
  CHECK(g.verdict == Verdict::Granted);
}

TEST_CASE("NC-v3 PSUM banks: Vector and Scalar wait for each other on a common bank only") {
  PortArbiter arbiter(false, true);
  CHECK(arbiter.arbitrates(Engine::Vector));
  CHECK(arbiter.arbitrates(Engine::Scalar));
  CHECK_FALSE(arbiter.arbitrates(Engine::GpSimd));
  CHECK_FALSE(arbiter.contends(Engine::Vector, true, 0));  // SBUF is free for all (A2)
  CHECK(arbiter.contends(Engine::Vector, false, 0b10));
  arbiter.claim(Engine::Scalar, true, 0b0110, ns(100));  // banks 1 and 2
  CHECK(arbiter.grant(Engine::Vector, true, 0b0100, 5, ns(10), bounds(ns(200))).at == ns(100));
  CHECK(arbiter.grant(Engine::Vector, false, 0b1001, 5, ns(10), bounds(ns(200))).at == ns(10));
  CHECK(arbiter.grant(Engine::Vector, false, 0b1001, 5, ns(10), bounds(ns(200))).verdict ==
        Verdict::Granted);
  // The Scalar claim does not hold GpSimd, nor Scalar itself.
  CHECK(arbiter.grant(Engine::GpSimd, true, 0b0110, 5, ns(10), bounds(ns(0))).at == ns(10));
  CHECK(arbiter.grant(Engine::Scalar, true, 0b0110, 5, ns(10), bounds(ns(0))).at == ns(10));
  // A rival that may still start first on some bank keeps the grant open; at the same time the
  // lower instruction index goes first.
  CHECK(arbiter.grant(Engine::Vector, false, 0b1, 5, ns(10), bounds(ns(9))).verdict ==
        Verdict::Earlier);
  arbiter.next(Engine::Scalar, 7);
  CHECK(arbiter.grant(Engine::Vector, false, 0b1, 9, ns(10), bounds(ns(10))).verdict ==
        Verdict::Tie);
  CHECK(arbiter.grant(Engine::Vector, false, 0b1, 5, ns(10), bounds(ns(10))).verdict ==
        Verdict::Granted);
  // A later claim on other banks does not release the earlier one's banks.
  arbiter.claim(Engine::Scalar, true, 0b1000, ns(150));
  CHECK(arbiter.grant(Engine::Vector, false, 0b0010, 5, ns(10), bounds(ns(200))).at == ns(100));
}

TEST_CASE("an engine whose program never accesses PSUM is nobody's PSUM rival") {
  const uint32_t vector = 1u << static_cast<unsigned>(Engine::Vector);
  const uint32_t scalar = 1u << static_cast<unsigned>(Engine::Scalar);
  PortArbiter both(false, true, vector | scalar);
  CHECK(both.contends(Engine::Vector, false, 0b1));
  PortArbiter vectorOnly(false, true, vector);
  CHECK_FALSE(vectorOnly.arbitrates(Engine::Vector));
  CHECK_FALSE(vectorOnly.contends(Engine::Vector, false, 0b1));
  PortArbiter trn1(true, false, vector);  // the SBUF rule stays
  CHECK(trn1.contends(Engine::Vector, true, 0));
  CHECK_FALSE(trn1.contends(Engine::Vector, false, 0b1));
}

TEST_CASE("psumBankMask: the banks a partition's byte range touches") {
  const isa::Geometry g;  // 16 KiB in 8 banks of 2 KiB
  CHECK(g.psumBankMask(0, 2048) == 0b1);
  CHECK(g.psumBankMask(1024, 2049) == 0b11);
  CHECK(g.psumBankMask(2048, 4096) == 0b10);
  CHECK(g.psumBankMask(14336, 16384) == 0x80);
  CHECK(g.psumBankMask(0, 16384) == 0xff);
  CHECK(g.psumBankMask(100, 100) == 0);
  CHECK(g.psumBankMask(0, 1 << 20) == 0xff);  // out of range: clamped to the last bank
}

TEST_CASE("trn2: Vector and Scalar on a common PSUM bank serialize, on different banks not") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::MachineConfig noBanks = sim::loadMachine("trn2", {"psum_bank_conflicts=false"});
  // Halves of bank 0 (bytes 0-1023 and 1024-2047), then bank 0 against bank 1.
  for (const int64_t scalarOffset : {1024, 2048}) {
    for (bool vectorFirst : {true, false}) {
      CAPTURE(scalarOffset);
      CAPTURE(vectorFirst);
      const Instruction v = copy(Engine::Vector, sbuf(0, 128, 0, 256), psum(0, 128, 0, 256));
      const Instruction a = make(Opcode::Activation, Engine::Scalar, sbuf(0, 128, 8192, 256),
                                 {psum(0, 128, scalarOffset, 256)});
      isa::Program p;
      p.instructions = {vectorFirst ? v : a, vectorFirst ? a : v};
      traces::EventLog log;
      runTiming(p, trn2, &log);
      const auto events = eventsByIndex(log);
      CHECK(events.at(0).start == Tick());
      if (scalarOffset < 2048) {  // same bank: program order, the second waits for the first
        CHECK(events.at(1).start == events.at(0).end);
        CHECK(events.at(1).stall == traces::StallCause::AccessConflict);
      } else {
        CHECK(events.at(1).start == Tick());
      }
      traces::EventLog parallel;
      runTiming(p, noBanks, &parallel);
      CHECK(eventsByIndex(parallel).at(1).start == Tick());
    }
  }
}

TEST_CASE("trn1: two engines contending at the same time go in program order") {
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  for (bool vectorFirst : {true, false}) {
    CAPTURE(vectorFirst);
    isa::Program p;
    Instruction v = copy(Engine::Vector, sbuf(0, 128, 0, 256), sbuf(0, 128, 8192, 256));
    Instruction g = make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 16384, 256));
    p.instructions = {vectorFirst ? v : g, vectorFirst ? g : v};
    traces::EventLog log;
    runTiming(p, trn1, &log);
    const auto events = eventsByIndex(log);
    CHECK(events.at(0).start == Tick());
    CHECK(events.at(1).start == events.at(0).end);
    CHECK(events.at(1).stall == traces::StallCause::AccessConflict);
  }
}

TEST_CASE("trn1: a waiting engine goes before the rival's next instruction only if it is earlier") {
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  // Vector 0, 1, 2 back to back and GpSimd 3: every tie goes to Vector (lower index).
  isa::Program chain;
  for (int i = 0; i < 3; ++i)
    chain.instructions.push_back(
        copy(Engine::Vector, sbuf(0, 128, 4096 * i, 256), sbuf(0, 128, 65536, 256)));
  chain.instructions.push_back(make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 32768, 256)));
  traces::EventLog log;
  runTiming(chain, trn1, &log);
  auto events = eventsByIndex(log);
  CHECK(events.at(3).start == events.at(2).end);
  // Vector 0, GpSimd 1, Vector 2, GpSimd 3: the two alternate.
  isa::Program alternating;
  for (int i = 0; i < 4; ++i)
    alternating.instructions.push_back(
        i % 2 == 0 ? copy(Engine::Vector, sbuf(0, 128, 4096 * i, 256), sbuf(0, 128, 65536, 256))
                   : make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, 4096 * i, 256)));
  log = {};
  runTiming(alternating, trn1, &log);
  events = eventsByIndex(log);
  for (int i = 1; i < 4; ++i) CHECK(events.at(i).start == events.at(i - 1).end);
}

TEST_CASE("random Vector/Scalar/GpSimd streams follow a sequential reference arbiter") {
  // Without semaphores every engine runs back to back; the reference grants, in order of the
  // earliest possible start (then instruction index), each head instruction of the three.
  // trn1: NC-v2 ports; trn2: PSUM banks; trn1 with the bank rule too: still all of PSUM.
  std::mt19937 rng(11);
  for (int round = 0; round < 120; ++round) {
    const sim::MachineConfig machine = round % 3 == 0 ? sim::loadMachine("trn1")
                                       : round % 3 == 1
                                           ? sim::loadMachine("trn2")
                                           : sim::loadMachine("trn1", {"psum_bank_conflicts=true"});
    CAPTURE(round);
    isa::Program p;
    const int n = 5 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int64_t free = 64 + static_cast<int64_t>(rng() % 600);
      const int64_t dst = 2048 * (i % 64);
      const bool fromPsum = rng() % 2 == 0;
      const AccessPattern src = fromPsum ? psum(0, 128, 4 * (rng() % 4) * 512, free)
                                         : sbuf(0, 128, 131072 + 4 * (rng() % 8) * 512, free);
      switch (rng() % 3) {
        case 0:
          p.instructions.push_back(copy(Engine::Vector, sbuf(0, 128, dst, free), src));
          break;
        case 1:
          p.instructions.push_back(
              make(Opcode::Activation, Engine::Scalar, sbuf(0, 128, dst, free), {src}));
          break;
        default:
          p.instructions.push_back(make(Opcode::Memset, Engine::GpSimd, sbuf(0, 128, dst, free)));
      }
    }
    traces::EventLog log;
    runTiming(p, machine, &log);
    const auto events = eventsByIndex(log);
    REQUIRE(events.size() == static_cast<size_t>(n));

    // Reference: per engine its queue; port claims as in the arbiter.
    sim::PortArbiter ref(machine.geometry.accessConflicts, machine.psumBankConflicts);
    std::array<std::vector<int64_t>, isa::kNumEngines> queue;
    for (int i = 0; i < n; ++i)
      queue[static_cast<size_t>(p.instructions[static_cast<size_t>(i)].engine)].push_back(i);
    std::array<size_t, isa::kNumEngines> head{};
    std::array<Tick, isa::kNumEngines> engineFree{};
    for (int granted = 0; granted < n; ++granted) {
      int64_t best = -1;
      Tick bestAt = Tick::never();
      for (size_t e = 0; e < isa::kNumEngines; ++e) {
        if (head[e] == queue[e].size()) continue;
        const int64_t i = queue[e][head[e]];
        const Instruction& inst = p.instructions[static_cast<size_t>(i)];
        const Tick at = ref.grant(inst.engine, true, psumBanksRead(inst, machine.geometry), i,
                                  engineFree[e], bounds(Tick::never()))
                            .at;
        if (at < bestAt || (at == bestAt && i < best)) {
          best = i;
          bestAt = at;
        }
      }
      REQUIRE(best >= 0);
      const Instruction& inst = p.instructions[static_cast<size_t>(best)];
      const auto e = static_cast<size_t>(inst.engine);
      const traces::InstructionEvent& got = events.at(best);
      CAPTURE(best);
      CHECK(got.start == bestAt);
      const Tick end = bestAt + (got.end - got.start);
      ref.claim(inst.engine, true, psumBanksRead(inst, machine.geometry), end);
      engineFree[e] = end;
      ++head[e];
    }
  }
}
