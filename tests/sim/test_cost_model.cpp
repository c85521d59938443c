// Cost formulas at their boundaries (reference 2.2-2.4), in engine cycles.
#include <doctest/doctest.h>

#include "sim/cost/compute_cost.h"
#include "sim_test_util.h"

using namespace neuronsim;
using namespace neuronsim::simtest;

namespace {
Instruction mm(int64_t m, int64_t n, Dtype dtype = Dtype::Bf16) {
  return matmul(psum(0, m, 0, n), sbuf(0, 128, 0, m, dtype), sbuf(0, 128, 4096, n, dtype));
}
int64_t cycles(const Instruction& inst, const sim::MachineConfig& machine) {
  return sim::computeCost(inst, machine).issue.value;
}
}  // namespace

TEST_CASE("matmul II is max(min(64, M), N) cycles for bf16 (I2)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  CHECK(cycles(mm(128, 512), m) == 512);
  CHECK(cycles(mm(128, 65), m) == 65);
  CHECK(cycles(mm(128, 64), m) == 64);
  CHECK(cycles(mm(128, 63), m) == 64);  // floor MM_INIT_LATENCY
  CHECK(cycles(mm(128, 1), m) == 64);   // vector as moving: one MM every ~64 cycles (P1)
  CHECK(cycles(mm(1, 128), m) == 128);  // vector as stationary: ~128 (P1)
  CHECK(cycles(mm(32, 1), m) == 32);
  CHECK(sim::computeCost(mm(128, 512), m).flops == 2 * 128 * 128 * 512);
}

TEST_CASE("fp32 matmul and LoadStationary cost 4x - LoadStationary is M/4, fp32 per preset") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(cycles(mm(128, 512, Dtype::Fp32), m) == 2048);
  CHECK(cycles(mm(128, 16, Dtype::Fp32), m) == 256);
  CHECK(sim::computeCost(mm(128, 512), m).loadStationary.value == 32);
  CHECK(sim::computeCost(mm(127, 512), m).loadStationary.value == 32);
  CHECK(sim::computeCost(mm(129 - 1 - 4, 512), m).loadStationary.value == 31);
  // ls_speedup_fp32: trn2 loads an fp32 stationary at the plain rate (a fit), trn1 fast (P1).
  CHECK(sim::computeCost(mm(128, 512, Dtype::Fp32), m).loadStationary.value == 512);
  CHECK(sim::computeCost(mm(33, 512, Dtype::Fp32), m).loadStationary.value == 132);
  CHECK(sim::computeCost(mm(128, 512, Dtype::Fp32), trn1).loadStationary.value == 128);
  CHECK(sim::computeCost(mm(33, 512, Dtype::Fp32), trn1).loadStationary.value == 33);
  CHECK(sim::computeCost(mm(128, 512), trn1).loadStationary.value == 32);
}

TEST_CASE("PE transpose is max(P, min(64, F)) - fp32 2x on trn2, 4x on trn1") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  auto transpose = [](int32_t p, int64_t f, Dtype dtype) {
    return make(Opcode::NcTranspose, Engine::Tensor, psum(0, static_cast<int32_t>(f), 0, p, dtype),
                {sbuf(0, p, 0, f, dtype)});
  };
  CHECK(cycles(transpose(128, 32, Dtype::Bf16), trn2) == 128);
  CHECK(cycles(transpose(16, 128, Dtype::Bf16), trn2) == 64);
  CHECK(cycles(transpose(16, 40, Dtype::Bf16), trn2) == 40);
  CHECK(cycles(transpose(128, 32, Dtype::Fp32), trn2) == 256);
  CHECK(cycles(transpose(128, 32, Dtype::Fp32), trn1) == 512);
  const sim::ComputeCost c = sim::computeCost(transpose(128, 32, Dtype::Bf16), trn2);
  CHECK(c.transposeFlops == 2 * 128 * 128 * 32);
  CHECK(c.flops == 0);  // RunTotals::flops counts matmuls only
}

TEST_CASE("one-input Vector/Scalar instructions cost max(MIN_II, N)") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  for (Engine e : {Engine::Vector, Engine::Scalar}) {
    CHECK(cycles(copy(e, sbuf(0, 128, 0, 63), sbuf(0, 128, 4096, 63)), m) == 64);
    CHECK(cycles(copy(e, sbuf(0, 128, 0, 64), sbuf(0, 128, 4096, 64)), m) == 64);
    CHECK(cycles(copy(e, sbuf(0, 128, 0, 65), sbuf(0, 128, 4096, 65)), m) == 65);
  }
  Instruction act =
      make(Opcode::Activation, Engine::Scalar, sbuf(0, 128, 0, 1000), {sbuf(0, 128, 8192, 1000)});
  CHECK(cycles(act, m) == 1000);
  act.reduceDst = sbuf(0, 128, 16384, 1);
  CHECK(cycles(act, m) == 1064);  // + ActReadAccumulator (MIN_II)
}

TEST_CASE("tensor_tensor is 2N, or N with one input in PSUM - bf16 rules per NC version") {
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  auto tt = [](AccessPattern a, AccessPattern b, Dtype out, isa::AluOp op) {
    Instruction i =
        make(Opcode::TensorTensor, Engine::Vector, sbuf(0, 128, 100000, 256, out), {a, b});
    i.op0 = op;
    return i;
  };
  CHECK(cycles(tt(sbuf(0, 128, 0, 256), sbuf(0, 128, 2048, 256), Dtype::Fp32, isa::AluOp::Add),
               trn1) == 512);
  CHECK(cycles(tt(psum(0, 128, 0, 256), sbuf(0, 128, 2048, 256), Dtype::Fp32, isa::AluOp::Add),
               trn1) == 256);
  CHECK(cycles(tt(sbuf(0, 128, 0, 256, Dtype::Bf16), sbuf(0, 128, 2048, 256, Dtype::Bf16),
                  Dtype::Bf16, isa::AluOp::Add),
               trn1) == 256);
  CHECK(cycles(tt(sbuf(0, 128, 0, 256, Dtype::Bf16), sbuf(0, 128, 2048, 256, Dtype::Bf16),
                  Dtype::Bf16, isa::AluOp::Max),
               trn1) == 512);
  // NC-v3 performance mode: 2x for any op when everything is 16-bit in SBUF (A2).
  CHECK(cycles(tt(sbuf(0, 128, 0, 256, Dtype::Bf16), sbuf(0, 128, 2048, 256, Dtype::Bf16),
                  Dtype::Bf16, isa::AluOp::Max),
               trn2) == 256);
  CHECK(cycles(tt(sbuf(0, 16, 0, 20), sbuf(0, 16, 2048, 20), Dtype::Fp32, isa::AluOp::Add), trn1) ==
        64);
}

TEST_CASE("trn2 VectorE performance mode: copy 4x contiguous, 2x strided, none for fp32") {
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  const Instruction bf = copy(Engine::Vector, sbuf(0, 128, 0, 1024, Dtype::Bf16),
                              sbuf(0, 128, 4096, 1024, Dtype::Bf16));
  CHECK(cycles(bf, trn2) == 256);
  CHECK(cycles(bf, trn1) == 1024);
  const Instruction strided = copy(Engine::Vector, sbuf(0, 128, 0, 1024, Dtype::Bf16),
                                   sbuf(0, 128, 8192, 1024, Dtype::Bf16, 2));
  CHECK(cycles(strided, trn2) == 512);
  const Instruction fp = copy(Engine::Vector, sbuf(0, 128, 0, 1024), sbuf(0, 128, 8192, 1024));
  CHECK(cycles(fp, trn2) == 1024);
  // Scalar engine copies get no performance mode.
  CHECK(cycles(copy(Engine::Scalar, sbuf(0, 128, 0, 1024, Dtype::Bf16),
                    sbuf(0, 128, 4096, 1024, Dtype::Bf16)),
               trn2) == 1024);
}

TEST_CASE("innermost stride above 16 bytes halves bandwidth (A1)") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  // fp32 step 4 = 16 B: full rate; step 5 = 20 B: half rate.
  CHECK(cycles(copy(Engine::Vector, sbuf(0, 128, 0, 500), sbuf(0, 128, 4096, 500, Dtype::Fp32, 4)),
               m) == 500);
  CHECK(cycles(copy(Engine::Vector, sbuf(0, 128, 0, 500), sbuf(0, 128, 4096, 500, Dtype::Fp32, 5)),
               m) == 1000);
  // The destination counts too.
  CHECK(cycles(copy(Engine::Scalar, sbuf(0, 128, 0, 500, Dtype::Fp32, 8), sbuf(0, 128, 4096, 500)),
               m) == 1000);
}

TEST_CASE("GpSimd pays GPSIMD_START: iota is 150 + N (I2)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  CHECK(cycles(make(Opcode::Iota, Engine::GpSimd, sbuf(0, 128, 0, 10, Dtype::Int32)), m) == 160);
  CHECK(cycles(make(Opcode::Iota, Engine::GpSimd, sbuf(0, 128, 0, 1000, Dtype::Int32)), m) == 1150);
  Instruction ms = make(Opcode::Memset, Engine::Vector, sbuf(0, 128, 0, 1000, Dtype::Bf16));
  CHECK(cycles(ms, m) == 500);  // zero in bf16: N/2
  ms.value = 1.0f;
  CHECK(cycles(ms, m) == 1000);
}

TEST_CASE("pipeline latency: MM_INIT on PE, static + 2 accesses on Vector/Scalar/GpSimd") {
  const sim::MachineConfig m = sim::loadMachine("trn1");
  CHECK(sim::pipelineLatency(Engine::Tensor, m).value == 64);
  CHECK(sim::pipelineLatency(Engine::Scalar, m).value == 100 + 2 * 60);
  CHECK(sim::pipelineLatency(Engine::Sync, m).value == 0);
}

TEST_CASE("cycles become picoseconds only at the engine's clock, rounded to the nearest ps") {
  using traces::Tick;
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  const sim::MachineConfig trn2 = sim::loadMachine("trn2");
  CHECK(sim::engineClock(Engine::Scalar, trn1).toTicks(sim::Cycles{140}) == Tick::fromPs(100000));
  CHECK(sim::engineClock(Engine::Vector, trn2).toTicks(sim::Cycles{96}) == Tick::fromPs(100000));
  // One PE cycle at 2.4 GHz is 416.67 ps: 417 alone, three make exactly 1250.
  CHECK(sim::engineClock(Engine::Tensor, trn2).toTicks(sim::Cycles{1}) == Tick::fromPs(417));
  CHECK(sim::engineClock(Engine::Tensor, trn2).toTicks(sim::Cycles{3}) == Tick::fromPs(1250));
  CHECK(sim::engineClock(Engine::Sync, trn2).toCycles(Tick::fromNs(600)).value == 720);
}

TEST_CASE("a strided matmul operand streams at half rate: moving and LoadStationary (A1)") {
  const sim::MachineConfig m = sim::loadMachine("trn2");
  auto strided = [](int64_t n, int64_t step, Dtype dtype) {
    return matmul(psum(0, 128, 0, n), sbuf(0, 128, 0, 128, dtype, step),
                  sbuf(0, 128, 65536, n, dtype, step));
  };
  CHECK(cycles(strided(256, 8, Dtype::Bf16), m) == 256);  // 16 B: full rate
  CHECK(cycles(strided(256, 9, Dtype::Bf16), m) == 512);  // 18 B: half rate
  CHECK(cycles(strided(256, 4, Dtype::Fp32), m) == 4 * 256);
  CHECK(cycles(strided(256, 5, Dtype::Fp32), m) == 4 * 512);
  CHECK(sim::computeCost(strided(256, 8, Dtype::Bf16), m).loadStationary.value == 32);
  CHECK(sim::computeCost(strided(256, 9, Dtype::Bf16), m).loadStationary.value == 64);
}
