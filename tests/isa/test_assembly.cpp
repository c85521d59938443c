// Text assembly: print then parse is the identity, hand-written text means what the docs say,
// errors name the line and the token.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/validation.h"
#include "operand_builders.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

Program base() {
  Program p;
  p.tensors.push_back({"a", {128, 512}, Dtype::Fp32, TensorKind::Input});
  p.tensors.push_back({"w_bf", {4, 32, 64}, Dtype::Bf16, TensorKind::Internal});
  p.tensors.push_back({"out", {128, 512}, Dtype::Fp32, TensorKind::Output});
  p.semaphores = {"tensor", "vector", "q0"};
  return p;
}

/// print -> parse gives the same program, and printing that again gives the same text.
void checkRoundTrip(const Program& p) {
  const std::string text = printProgram(p);
  CAPTURE(text);
  const Program back = parseProgram(text, "roundtrip");
  CHECK(back == p);
  CHECK(printProgram(back) == text);
}

void checkRoundTrip(const Instruction& inst) {
  Program p = base();
  p.instructions.push_back(inst);
  checkRoundTrip(p);
}

std::string parseError(const std::string& text) {
  try {
    parseProgram(text, "f.nsasm");
  } catch (const neuronsim::Error& e) {
    return e.what();
  }
  return "";
}

const std::vector<Dim> kRow{{1, 512}};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("assembly: declarations of every dtype and kind round trip") {
  Program p;
  for (int d = 0; d < kNumDtypes; ++d)
    p.tensors.push_back(
        {fmt::format("t{}", d), {d + 1, 3}, static_cast<Dtype>(d), static_cast<TensorKind>(d % 3)});
  p.tensors.push_back({"scalar", {}, Dtype::Fp32, TensorKind::Output});
  p.semaphores = {"tensor", "q15", "_x"};
  checkRoundTrip(p);
  checkRoundTrip(Program{});
}

TEST_CASE("assembly: nc_matmul with accumulate, waits and signals") {
  Instruction i =
      make(Opcode::NcMatmul, Engine::Tensor, ps(0, 64, 0x800, kRow),
           {sb(0, 128, 0, {{1, 64}}, Dtype::Bf16), sb(0, 128, 0x1000, kRow, Dtype::Bf16)});
  i.accumulate = true;
  i.waits = {{0, 3}, {2, 16}};
  i.signals = {{0, SignalAt::Complete, 1}, {1, SignalAt::Read, 2}};
  checkRoundTrip(i);
  i.accumulate = false;
  i.signals = {{2, SignalAt::Complete, -5}};
  checkRoundTrip(i);
}

TEST_CASE("assembly: nc_transpose on Tensor and Vector") {
  checkRoundTrip(make(Opcode::NcTranspose, Engine::Tensor, ps(0, 64, 0, {{1, 128}}),
                      {sb(0, 128, 0, {{1, 64}})}));
  checkRoundTrip(make(Opcode::NcTranspose, Engine::Vector, sb(32, 32, 64, {{1, 32}}),
                      {sb(96, 32, 0, {{1, 32}})}));
}

TEST_CASE("assembly: activation, every function, scale as immediate or vector, bias, reduce_dst") {
  for (int f = 0; f <= static_cast<int>(ActFn::Reciprocal); ++f) {
    Instruction i =
        make(Opcode::Activation, Engine::Scalar, sb(0, 128, 0, kRow), {ps(0, 128, 0, kRow)});
    i.act = static_cast<ActFn>(f);
    i.scale.imm = 0.1f;
    checkRoundTrip(i);
  }
  Instruction i =
      make(Opcode::Activation, Engine::Scalar, sb(0, 128, 0, kRow), {ps(0, 128, 0, kRow)});
  i.scale.vec = sb(0, 128, 0x2000, {{1, 1}});
  i.bias = sb(0, 128, 0x2004, {});
  i.reduceDst = sb(0, 128, 0x2008, {{1, 1}});
  checkRoundTrip(i);
  i.scale.imm = 0.0f;  // an unused immediate beside a vector still round-trips
  checkRoundTrip(i);
  CHECK(parseProgram("scalar activation scale=sbuf:fp32[0:1]@0[]").instructions[0].scale.imm ==
        1.0f);
}

TEST_CASE("assembly: tensor_tensor with every ALU op") {
  for (int op = 0; op <= static_cast<int>(AluOp::IsGe); ++op) {
    Instruction i = make(Opcode::TensorTensor, Engine::GpSimd, sb(0, 128, 0, kRow),
                         {sb(0, 128, 0x800, kRow), sb(0, 128, 0x1000, kRow, Dtype::Bf16)});
    i.op0 = static_cast<AluOp>(op);
    checkRoundTrip(i);
  }
}

TEST_CASE("assembly: tensor_scalar with immediates, vectors and reverse flags") {
  Instruction i =
      make(Opcode::TensorScalar, Engine::Vector, sb(0, 128, 0, kRow), {sb(0, 128, 0x800, kRow)});
  i.op0 = AluOp::Subtract;
  i.operand0.imm = -2.5f;
  i.reverse0 = true;
  i.op1 = AluOp::Divide;
  i.operand1.vec = sb(0, 128, 0x4000, {{1, 1}});
  i.reverse1 = true;
  checkRoundTrip(i);
  i.reverse0 = false;
  i.operand0.vec = sb(0, 128, 0x4004, {{1, 1}});
  i.operand1 = ScalarOperand{3.0f, std::nullopt};
  checkRoundTrip(i);
}

TEST_CASE("assembly: scalar_tensor_tensor, tensor_reduce, tensor_copy, copy_predicated, memset") {
  Instruction stt = make(Opcode::ScalarTensorTensor, Engine::Vector, sb(0, 128, 0, kRow),
                         {sb(0, 128, 0x800, kRow), sb(0, 128, 0x1000, kRow)});
  stt.op0 = AluOp::Multiply;
  stt.operand0.imm = 0.5f;
  stt.op1 = AluOp::Add;
  checkRoundTrip(stt);
  Instruction red = make(Opcode::TensorReduce, Engine::Vector, sb(0, 128, 0, {{1, 8}}),
                         {sb(0, 128, 64, {{64, 8}, {8, 8}, {1, 8}})});
  red.op0 = AluOp::Max;
  red.reduceAxes = 2;
  red.negate = true;
  checkRoundTrip(red);
  checkRoundTrip(make(Opcode::TensorCopy, Engine::Scalar, sb(0, 128, 0, kRow, Dtype::Fp8E5m2),
                      {ps(0, 128, 0, kRow)}));
  checkRoundTrip(make(Opcode::CopyPredicated, Engine::Vector, sb(0, 128, 0, kRow),
                      {sb(0, 128, 0x800, kRow, Dtype::Uint8), sb(0, 128, 0x1000, kRow)}));
  Instruction ms = make(Opcode::Memset, Engine::GpSimd, sb(64, 64, 0, {{2, 256}}, Dtype::Int32));
  ms.value = -0.0f;
  checkRoundTrip(ms);
  const Program p = parseProgram(printInstruction(base(), ms), "x");
  CHECK(std::signbit(p.instructions[0].value));
}

TEST_CASE("assembly: iota and affine_select patterns") {
  Instruction io =
      make(Opcode::Iota, Engine::GpSimd, sb(0, 128, 0, {{8, 4}, {1, 8}}, Dtype::Int32));
  io.affine = Affine{{{1, 4}, {-4, 8}}, -7, 32};
  checkRoundTrip(io);
  Instruction as =
      make(Opcode::AffineSelect, Engine::GpSimd, sb(0, 128, 0, kRow), {sb(0, 128, 0x800, kRow)});
  as.affine = Affine{{{-1, 512}}, 3, 1};
  as.cmp = AluOp::IsGt;
  as.value = -INFINITY;
  checkRoundTrip(as);
}

TEST_CASE("assembly: dma_copy and dma_transpose with queues and HBM views") {
  Instruction d =
      make(Opcode::DmaCopy, Engine::Sync, sb(0, 128, 0, kRow), {hbmView(0, 128, 512, 0, kRow)});
  d.dmaQueue = 15;
  d.signals = {{2, SignalAt::Complete, 1}};
  checkRoundTrip(d);
  d.engine = Engine::GpSimd;
  d.srcs = {hbmView(2, 16, -512, 65024, {{2, 256}, {1, 2}})};
  checkRoundTrip(d);
  Instruction t = make(Opcode::DmaTranspose, Engine::Scalar, sb(0, 64, 0, {{1, 128}}, Dtype::Bf16),
                       {hbmView(1, 128, 64, 0, {{1, 64}}, Dtype::Bf16)});
  t.dmaQueue = 0;
  checkRoundTrip(t);
}

TEST_CASE("assembly: odd fields round trip (raw indices, empty dims, negative values)") {
  Instruction i =
      make(Opcode::TensorCopy, Engine::Vector, sb(0, 1, -16, {}), {hbmView(-1, 0, 0, 0, {})});
  i.srcs.push_back(hbmView(7, 2, 3, -4, {{0, 0}}));
  i.srcs.push_back(sb(-3, -2, 0, {{-32768, 65535}}));
  i.srcs[2].tensor = 1;  // an on-chip operand naming a tensor (invalid, but printable)
  i.srcs[2].partitionStep = 9;
  i.waits = {{-1, 0}, {9, -3}};
  i.signals = {
      {5, SignalAt::Read, 0}, {0, SignalAt::Complete, INT64_MIN}, {1, SignalAt::Read, INT64_MAX}};
  i.reduceAxes = -2;
  i.dmaQueue = 3;
  checkRoundTrip(i);
}

TEST_CASE("assembly: every engine name, and floats exact to the bit") {
  for (int e = 0; e < kNumEngines; ++e)
    checkRoundTrip(make(Opcode::Memset, static_cast<Engine>(e), sb(0, 1, 0, kRow)));
  const float specials[] = {1e-45f,      -1.17549435e-38f, 3.40282347e38f, 0.1f,
                            1.0f / 3.0f, INFINITY,         16777217.0f};
  Program p = base();
  for (float v : specials) {
    Instruction i = make(Opcode::Memset, Engine::Vector, sb(0, 1, 0, kRow));
    i.value = v;
    p.instructions.push_back(i);
  }
  uint32_t bits = 0x12345678u;
  for (int k = 0; k < 2000; ++k) {
    bits = bits * 1664525u + 1013904223u;  // LCG over all bit patterns
    const float v = std::bit_cast<float>(bits);
    if (std::isnan(v)) continue;
    Instruction i =
        make(Opcode::TensorScalar, Engine::Vector, sb(0, 1, 0, kRow), {sb(0, 1, 0, kRow)});
    i.operand0.imm = v;
    i.scale.imm = -v;
    p.instructions.push_back(i);
  }
  const Program back = parseProgram(printProgram(p), "floats");
  REQUIRE(back.instructions.size() == p.instructions.size());
  for (size_t k = 0; k < p.instructions.size(); ++k) {
    CHECK(std::bit_cast<uint32_t>(back.instructions[k].value) ==
          std::bit_cast<uint32_t>(p.instructions[k].value));
    CHECK(std::bit_cast<uint32_t>(back.instructions[k].operand0.imm) ==
          std::bit_cast<uint32_t>(p.instructions[k].operand0.imm));
    CHECK(std::bit_cast<uint32_t>(back.instructions[k].scale.imm) ==
          std::bit_cast<uint32_t>(p.instructions[k].scale.imm));
  }
  Instruction n = make(Opcode::Memset, Engine::Vector, sb(0, 1, 0, kRow));
  n.value = NAN;
  Program np = base();
  np.instructions.push_back(n);
  CHECK(std::isnan(parseProgram(printProgram(np)).instructions[0].value));
}

TEST_CASE("assembly: notes keep any text") {
  for (const std::string note : {"plain", "  two leading spaces", "has # hash and \\ backslash",
                                 "line\nbreak\r", "trailing \\", "ends with space "}) {
    Instruction i = make(Opcode::Memset, Engine::Vector, sb(0, 1, 0, kRow));
    i.note = note;
    checkRoundTrip(i);
  }
}

TEST_CASE("assembly: hand-written text means what docs/assembly.md says") {
  const std::string text = R"(
# a comment line
tensor x [ 128, 64 ] bf16 input   # trailing comment
tensor y [128,64] fp32 output
semaphore q0 vector
semaphore act

sync dma_copy queue=0 dst=sbuf:bf16[0:128]@0x100[[1,64]] srcs=hbm:bf16:x[0:128:64]@0[[1,64]] signal=q0+1
vector tensor_scalar dst=sbuf:fp32[64:96]@256[[2, 8], [1, 2]] srcs=sbuf:bf16[64:96]@0[[1,16]] op=multiply operand0=2 op1=add operand1=sbuf:fp32[64:96]@0x40[[1,1]] reverse1 wait=q0>=1 wait=act>=2 signal=vector+1@read  # scale
)";
  const Program p = parseProgram(text, "hand");
  REQUIRE(p.tensors.size() == 2);
  CHECK(p.tensors[0] == TensorDecl{"x", {128, 64}, Dtype::Bf16, TensorKind::Input});
  CHECK(p.tensors[1] == TensorDecl{"y", {128, 64}, Dtype::Fp32, TensorKind::Output});
  CHECK(p.semaphores == std::vector<std::string>{"q0", "vector", "act"});
  REQUIRE(p.instructions.size() == 2);
  Instruction dma = make(Opcode::DmaCopy, Engine::Sync, sb(0, 128, 0x100, {{1, 64}}, Dtype::Bf16),
                         {hbmView(0, 128, 64, 0, {{1, 64}}, Dtype::Bf16)});
  dma.dmaQueue = 0;
  dma.signals = {{0, SignalAt::Complete, 1}};
  CHECK(p.instructions[0] == dma);
  Instruction ts = make(Opcode::TensorScalar, Engine::Vector, sb(64, 32, 256, {{2, 8}, {1, 2}}),
                        {sb(64, 32, 0, {{1, 16}}, Dtype::Bf16)});
  ts.op0 = AluOp::Multiply;
  ts.operand0.imm = 2.0f;
  ts.op1 = AluOp::Add;
  ts.operand1.vec = sb(64, 32, 0x40, {{1, 1}});
  ts.reverse1 = true;
  ts.waits = {{0, 1}, {2, 2}};
  ts.signals = {{1, SignalAt::Read, 1}};
  ts.note = "scale";
  CHECK(p.instructions[1] == ts);
}

TEST_CASE("assembly: the line of a Tensor-engine instruction is not a declaration") {
  const Program p = parseProgram(
      "tensor nc_matmul dst=psum:fp32[0:1]@0[[1,1]]\ntensor nc_matmul [1] fp32 internal\n", "amb");
  REQUIRE(p.instructions.size() == 1);
  CHECK(p.instructions[0].engine == Engine::Tensor);
  REQUIRE(p.tensors.size() == 1);
  CHECK(p.tensors[0].name == "nc_matmul");
}

TEST_CASE("assembly: parse errors name the source, line and token") {
  const std::string head = "tensor a [4,4] fp32 input\nsemaphore s\n# comment\n";
  CHECK(parseError(head + "vector tensor_copy dst=sbuf:fp32[0:4]@0[[1,4]] opp=add\n") ==
        "f.nsasm:4: unknown field 'opp'");
  CHECK(parseError(head + "vectr memset\n") == "f.nsasm:4: unknown engine or keyword 'vectr'");
  CHECK(parseError(head + "vector mmset\n") == "f.nsasm:4: unknown opcode 'mmset'");
  CHECK(parseError(head + "vector\n") == "f.nsasm:4: expected an opcode after 'vector'");
  CHECK(parseError(head + "sync dma_copy dst=hbm:fp32:b[0:4:4]@0[[1,4]]\n") ==
        "f.nsasm:4: bad dst 'hbm:fp32:b[0:4:4]@0[[1,4]]': unknown tensor 'b'");
  CHECK(parseError(head + "vector memset dst=sbuf:fp3[0:4]@0[[1,4]]\n") ==
        "f.nsasm:4: bad dst 'sbuf:fp3[0:4]@0[[1,4]]': unknown dtype 'fp3'");
  CHECK(parseError(head + "vector memset dst=sram:fp32[0:4]@0[[1,4]]\n") ==
        "f.nsasm:4: bad dst 'sram:fp32[0:4]@0[[1,4]]': unknown memory space 'sram' (hbm, sbuf or "
        "psum)");
  CHECK(parseError(head + "vector memset dst=sbuf:fp32[0:4][[1,4]]\n") ==
        "f.nsasm:4: bad dst 'sbuf:fp32[0:4][[1,4]]': expected '@' at '[[1,4]]'");
  CHECK(parseError(head + "vector memset dst=sbuf:fp32[0:4]@0[[1,4]] wait=t>=1\n") ==
        "f.nsasm:4: bad wait 't>=1': unknown semaphore 't'");
  CHECK(parseError(head + "vector memset dst=sbuf:fp32[0:4]@0[[1,4]] signal=s@complete\n") ==
        "f.nsasm:4: bad signal 's@complete': expected +DELTA after the semaphore");
  CHECK(parseError(head + "vector memset dst=sbuf:fp32[0:4]@0[[1,4]] signal=s+1@done\n") ==
        "f.nsasm:4: bad signal 's+1@done': unknown signal point 'done' (read or complete)");
  CHECK(parseError(head + "vector memset dst=sbuf:fp32[0:4]@0[[1,4]] value=1.5x\n") ==
        "f.nsasm:4: bad value '1.5x' (expected a number)");
  CHECK(parseError(head +
                   "vector memset dst=sbuf:fp32[0:4]@0[[1,4]] dst=sbuf:fp32[0:4]@0[[1,4]]\n") ==
        "f.nsasm:4: field 'dst' given twice");
  CHECK(parseError(head + "vector memset dst\n") ==
        "f.nsasm:4: field 'dst' needs a value (dst=...)");
  CHECK(parseError(head + "vector tensor_tensor op0=plus\n") == "f.nsasm:4: unknown ALU op 'plus'");
  CHECK(parseError(head + "scalar activation act=relu6\n") ==
        "f.nsasm:4: unknown activation function 'relu6'");
  CHECK(parseError(head + "vector memset negate=maybe\n") ==
        "f.nsasm:4: bad negate 'maybe' (expected true or false)");
  CHECK(parseError(head + "sync dma_copy queue=0x\n") ==
        "f.nsasm:4: bad queue '0x' (expected an integer)");
  CHECK(parseError(head + "vector memset wait=--9223372036854775808>=1\n") ==
        "f.nsasm:4: bad wait '--9223372036854775808>=1': bad integer '-' (expected an integer)");
  CHECK(parseError(head + "vector memset wait=-3000000000>=1\n") ==
        "f.nsasm:4: semaphore '-3000000000' does not fit in 32 bits");
  CHECK(parseError(head + "sync dma_copy queue=99999999999\n") ==
        "f.nsasm:4: queue '99999999999' does not fit in 32 bits");
}

TEST_CASE("assembly: declaration errors") {
  CHECK(parseError("tensor a [4,4] fp32 input\ntensor a [4] fp32 output\n") ==
        "f.nsasm:2: tensor 'a' declared twice");
  CHECK(parseError("tensor 9a [4] fp32 input\n") ==
        "f.nsasm:1: bad tensor name '9a' (letters, digits and '_', not starting with a digit)");
  CHECK(parseError("tensor a [4] fp64 input\n") == "f.nsasm:1: unknown dtype 'fp64'");
  CHECK(parseError("tensor a [4] fp32 inout\n") ==
        "f.nsasm:1: unknown tensor kind 'inout' (input, output or internal)");
  CHECK(parseError("tensor a [4 fp32 input\n") ==
        "f.nsasm:1: expected 'tensor NAME [D0,D1,...] DTYPE input|output|internal'");
  CHECK(parseError("tensor a [4,x] fp32 input\n") ==
        "f.nsasm:1: bad shape '[4,x]': bad integer 'x' (expected an integer)");
  CHECK(parseError("semaphore s\nsemaphore t s\n") == "f.nsasm:2: semaphore 's' declared twice");
  CHECK(parseError("semaphore\n") == "f.nsasm:1: expected 'semaphore NAME...'");
}

TEST_CASE("assembly: every example in docs/assembly.md parses, validates and covers every opcode") {
  const std::string doc = readFile(std::string(NEURONSIM_SOURCE_DIR) + "/docs/assembly.md");
  std::string program;
  int blocks = 0;
  size_t pos = 0;
  while ((pos = doc.find("```nsasm\n", pos)) != std::string::npos) {
    pos += 9;
    const size_t end = doc.find("```", pos);
    REQUIRE(end != std::string::npos);
    program += doc.substr(pos, end - pos);
    ++blocks;
    pos = end + 3;
  }
  CHECK(blocks >= 2);
  const Program p = parseProgram(program, "docs/assembly.md");
  validateProgram(p, Geometry{});
  std::set<Opcode> seen;
  for (const Instruction& i : p.instructions) seen.insert(i.opcode);
  CHECK(static_cast<int>(seen.size()) == kNumOpcodes);
  checkRoundTrip(p);
}

TEST_CASE("assembly: tests/programs/*.nsasm parse and validate") {
  for (const char* name : {"add_matmul.nsasm", "causal_softmax.nsasm"}) {
    CAPTURE(name);
    const std::string text =
        readFile(std::string(NEURONSIM_SOURCE_DIR) + "/tests/programs/" + name);
    const Program p = parseProgram(text, name);
    CHECK_FALSE(p.instructions.empty());
    validateProgram(p, Geometry{});
    checkRoundTrip(p);
  }
}

TEST_CASE("assembly: damaged lines give a located error, never a crash") {
  const std::string good =
      "tensor x [128,512] fp32 input\n"
      "semaphore q0\n"
      "sync dma_copy queue=0 dst=sbuf:fp32[0:128]@0x0[[1,512]] "
      "srcs=hbm:fp32:x[0:128:512]@0[[1,512]] "
      "signal=q0+1@complete wait=q0>=0\n"
      "vector tensor_scalar op0=add operand0=sbuf:fp32[0:128]@0x0[[1,1]]|2 reverse0 "
      "dst=sbuf:fp32[0:128]@0x0[[1,1]] "
      "srcs=sbuf:fp32[0:128]@0x0[[1,1]] pattern=[[1,2],[3,4]] value=-1e-3\n";
  REQUIRE_NOTHROW(parseProgram(good));
  int errors = 0;
  for (size_t cut = 0; cut < good.size(); ++cut) {
    for (const std::string& text :
         {good.substr(0, cut), good.substr(0, cut) + good.substr(cut + 1)}) {
      try {
        parseProgram(text, "damaged");
      } catch (const neuronsim::Error& e) {
        ++errors;
        CHECK(std::string(e.what()).rfind("damaged:", 0) == 0);
      }
    }
  }
  CHECK(errors > 100);
}
