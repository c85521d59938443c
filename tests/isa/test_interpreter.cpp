// The sequential interpreter: builder order, a small end-to-end program, semaphores ignored.
#include <doctest/doctest.h>

#include "isa/interpreter.h"
#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

Instruction dma(AccessPattern dst, AccessPattern src) {
  Instruction inst = make(Opcode::DmaCopy, Engine::Sync, std::move(dst), {std::move(src)});
  inst.dmaQueue = 0;
  return inst;
}

}  // namespace

TEST_CASE("interpret: load, add on Vector, matmul on Tensor, evict on Scalar, store") {
  Program program;
  program.tensors = {{"x", {2, 2}, Dtype::Fp32, TensorKind::Input},
                     {"y", {2, 2}, Dtype::Fp32, TensorKind::Input},
                     {"out", {2, 2}, Dtype::Fp32, TensorKind::Output}};
  const AccessPattern x = sb(0, 2, 2, 0), y = sb(0, 2, 2, 16), s = sb(0, 2, 2, 32),
                      o = sb(0, 2, 2, 48);
  program.instructions.push_back(dma(x, hbmView(0, 2, 2, 0, {{1, 2}})));
  program.instructions.push_back(dma(y, hbmView(1, 2, 2, 0, {{1, 2}})));
  Instruction add = make(Opcode::TensorTensor, Engine::Vector, s, {x, y});
  add.op0 = AluOp::Add;
  program.instructions.push_back(add);
  Instruction mm = make(Opcode::NcMatmul, Engine::Tensor, ps(0, 2, 2, 0), {s, x});
  program.instructions.push_back(mm);
  Instruction evict = make(Opcode::Activation, Engine::Scalar, o, {ps(0, 2, 2, 0)});
  evict.act = ActFn::Relu;
  program.instructions.push_back(evict);
  program.instructions.push_back(dma(hbmView(2, 2, 2, 0, {{1, 2}}), o));

  MemoryState memory(program, smallGeometry());
  memory.setTensor(0, {1, 2, 3, 4});
  memory.setTensor(1, {0, -4, 1, -9});
  interpret(program, memory);
  // s = x + y = [[1,-2],[4,-5]]; out = relu(s^T @ x) = relu([[13,18],[-17,-24]]).
  CHECK(memory.getTensor(2) == std::vector<float>{13, 18, 0, 0});
  CHECK(memory.uninitializedReads().empty());
}

TEST_CASE("interpret runs in builder order and attributes reads to the program index") {
  Program program;
  program.tensors = {{"out", {1}, Dtype::Fp32, TensorKind::Output}};
  Instruction first = make(Opcode::Memset, Engine::Vector, sb(0, 1, 1, 0));
  first.value = 1;
  Instruction second = first;
  second.value = 2;
  second.engine = Engine::GpSimd;
  // A wait on a semaphore nobody signals: the interpreter ignores it.
  second.waits.push_back({0, 5});
  program.semaphores = {"never"};
  program.instructions = {first, second, dma(hbmView(0, 1, 0, 0, {{1, 1}}), sb(0, 1, 1, 0)),
                          dma(hbmView(0, 1, 0, 0, {{1, 1}}), sb(0, 1, 1, 64))};
  SUBCASE("last writer wins, and a later never-written read is instruction 3") {
    MemoryState memory(program, smallGeometry());
    program.instructions.pop_back();
    interpret(program, memory);
    CHECK(memory.getTensor(0) == std::vector<float>{2});
    CHECK(memory.uninitializedReads().empty());
  }
  SUBCASE("the uninitialized read is attributed to index 3") {
    MemoryState memory(program, smallGeometry());
    interpret(program, memory);
    REQUIRE(memory.uninitializedReads().size() == 1);
    CHECK(memory.uninitializedReads()[0].instruction == 3);
    CHECK(std::isnan(memory.getTensor(0)[0]));
  }
  SUBCASE("swapping the memsets changes the result") {
    std::swap(program.instructions[0], program.instructions[1]);
    program.instructions.pop_back();
    MemoryState memory(program, smallGeometry());
    interpret(program, memory);
    CHECK(memory.getTensor(0) == std::vector<float>{1});
  }
}

TEST_CASE("an empty program does nothing") {
  Program program;
  MemoryState memory(program, smallGeometry());
  interpret(program, memory);
  CHECK(memory.uninitializedReads().empty());
}
