// Validation: every hardware rule with a passing case at its boundary and a failing one past it.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "isa/error.h"
#include "isa/interpreter.h"
#include "isa/memory_state.h"
#include "isa/validation.h"
#include "operand_builders.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

/// Tensors: 0 = a [128,512] fp32 input, 1 = b [128,512] bf16 input, 2 = out [128,512] fp32.
Program withInstruction(const Instruction& inst) {
  Program p;
  p.tensors.push_back({"a", {128, 512}, Dtype::Fp32, TensorKind::Input});
  p.tensors.push_back({"b", {128, 512}, Dtype::Bf16, TensorKind::Input});
  p.tensors.push_back({"out", {128, 512}, Dtype::Fp32, TensorKind::Output});
  p.semaphores = {"s0", "s1", "s2"};
  p.instructions.push_back(inst);
  return p;
}

std::string errorOf(const Program& p, const Geometry& g = {}) {
  try {
    validateProgram(p, g);
  } catch (const neuronsim::Error& e) {
    return e.what();
  }
  return "";
}

std::string errorOf(const Instruction& inst, const Geometry& g = {}) {
  return errorOf(withInstruction(inst), g);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::vector<Dim> kRow512{{1, 512}};

/// A valid instruction of each opcode, on its usual engine.
Instruction valid(Opcode op) {
  switch (op) {
    case Opcode::NcMatmul:
      return make(op, Engine::Tensor, ps(0, 64, 0, kRow512),
                  {sb(0, 128, 0, {{1, 64}}), sb(0, 128, 256, kRow512)});
    case Opcode::NcTranspose:
      return make(op, Engine::Tensor, ps(0, 64, 0, {{1, 128}}), {sb(0, 128, 0, {{1, 64}})});
    case Opcode::Activation:
      return make(op, Engine::Scalar, sb(0, 128, 0, kRow512), {ps(0, 128, 0, kRow512)});
    case Opcode::TensorTensor:
      return make(op, Engine::Vector, sb(0, 128, 0, kRow512),
                  {sb(0, 128, 2048, kRow512), ps(0, 128, 0, kRow512)});
    case Opcode::TensorScalar:
      return make(op, Engine::Vector, sb(0, 128, 0, kRow512), {sb(0, 128, 2048, kRow512)});
    case Opcode::ScalarTensorTensor:
      return make(op, Engine::Vector, sb(0, 128, 0, kRow512),
                  {sb(0, 128, 2048, kRow512), sb(0, 128, 4096, kRow512)});
    case Opcode::TensorReduce: {
      Instruction i =
          make(op, Engine::Vector, sb(0, 128, 0, {{1, 8}}), {sb(0, 128, 64, {{64, 8}, {1, 64}})});
      i.op0 = AluOp::Add;
      return i;
    }
    case Opcode::TensorCopy:
      return make(op, Engine::Vector, sb(0, 128, 0, kRow512, Dtype::Bf16),
                  {ps(0, 128, 0, kRow512)});
    case Opcode::CopyPredicated:
      return make(op, Engine::Vector, sb(0, 128, 0, kRow512),
                  {sb(0, 128, 2048, kRow512), sb(0, 128, 4096, kRow512)});
    case Opcode::Memset:
      return make(op, Engine::GpSimd, sb(0, 128, 0, kRow512));
    case Opcode::Iota: {
      Instruction i = make(op, Engine::GpSimd, sb(0, 128, 0, {{8, 4}, {1, 8}}, Dtype::Int32));
      i.affine = Affine{{{1, 4}, {4, 8}}, 0, 32};
      return i;
    }
    case Opcode::AffineSelect: {
      Instruction i = make(op, Engine::GpSimd, sb(0, 128, 0, kRow512), {sb(0, 128, 2048, kRow512)});
      i.affine = Affine{{{-1, 512}}, 0, 1};
      return i;
    }
    case Opcode::DmaCopy: {
      Instruction i =
          make(op, Engine::Sync, sb(0, 128, 0, kRow512), {hbmView(0, 128, 512, 0, kRow512)});
      i.dmaQueue = 0;
      return i;
    }
    case Opcode::DmaTranspose: {
      Instruction i = make(op, Engine::Sync, sb(0, 64, 0, {{1, 128}}, Dtype::Bf16),
                           {hbmView(1, 128, 512, 0, {{1, 64}}, Dtype::Bf16)});
      i.dmaQueue = 3;
      return i;
    }
  }
  return {};
}

}  // namespace

TEST_CASE("validation: a typical instruction of every opcode passes") {
  for (int op = 0; op < kNumOpcodes; ++op) {
    CAPTURE(opcodeName(static_cast<Opcode>(op)));
    CHECK(errorOf(valid(static_cast<Opcode>(op))) == "");
  }
}

TEST_CASE("validation: message names instruction, opcode, operand and rule") {
  Instruction i = valid(Opcode::TensorTensor);
  i.srcs[1].partitionCount = 130;
  Program p = withInstruction(valid(Opcode::Memset));
  p.instructions.push_back(i);
  CHECK(errorOf(p) == "instruction 1 (tensor_tensor): srcs[1]: 130 partitions exceeds 128");
}

TEST_CASE("validation: engines allowed per opcode") {
  // Expected table from reference 2.1 (written out independently of the implementation).
  const std::set<std::pair<Opcode, Engine>> allowed = {
      {Opcode::NcMatmul, Engine::Tensor},       {Opcode::NcTranspose, Engine::Tensor},
      {Opcode::NcTranspose, Engine::Vector},    {Opcode::Activation, Engine::Scalar},
      {Opcode::TensorTensor, Engine::Vector},   {Opcode::TensorTensor, Engine::GpSimd},
      {Opcode::TensorScalar, Engine::Vector},   {Opcode::TensorScalar, Engine::Scalar},
      {Opcode::TensorScalar, Engine::GpSimd},   {Opcode::ScalarTensorTensor, Engine::Vector},
      {Opcode::TensorReduce, Engine::Vector},   {Opcode::TensorCopy, Engine::Vector},
      {Opcode::TensorCopy, Engine::Scalar},     {Opcode::TensorCopy, Engine::GpSimd},
      {Opcode::CopyPredicated, Engine::Vector}, {Opcode::Memset, Engine::Vector},
      {Opcode::Memset, Engine::GpSimd},         {Opcode::Iota, Engine::GpSimd},
      {Opcode::AffineSelect, Engine::GpSimd},   {Opcode::DmaCopy, Engine::Sync},
      {Opcode::DmaCopy, Engine::Scalar},        {Opcode::DmaCopy, Engine::GpSimd},
      {Opcode::DmaTranspose, Engine::Sync},     {Opcode::DmaTranspose, Engine::Scalar},
      {Opcode::DmaTranspose, Engine::GpSimd},
  };
  for (int op = 0; op < kNumOpcodes; ++op) {
    for (int e = 0; e < kNumEngines; ++e) {
      Instruction i = valid(static_cast<Opcode>(op));
      i.engine = static_cast<Engine>(e);
      // Keep the engine-specific rules out of the way: GpSimd has no PSUM, the Vector
      // transpose is 32x32, the Scalar tensor_scalar needs mult/add.
      for (AccessPattern* ap : {&i.dst, i.srcs.empty() ? &i.dst : &i.srcs[0]})
        if (ap->space == Space::Psum && i.engine == Engine::GpSimd && !isDma(i.opcode))
          ap->space = Space::Sbuf;
      if (i.opcode == Opcode::TensorTensor) i.srcs[1].space = Space::Sbuf;
      if (i.opcode == Opcode::TensorCopy) i.srcs[0].space = Space::Sbuf;
      if (i.opcode == Opcode::NcTranspose && i.engine == Engine::Vector) {
        i.srcs[0] = sb(0, 32, 0, {{1, 16}});
        i.dst = sb(0, 16, 0, {{1, 32}});
      }
      if (i.opcode == Opcode::TensorScalar) i.op0 = AluOp::Multiply;
      const bool ok = allowed.count({i.opcode, i.engine}) > 0;
      CAPTURE(opcodeName(i.opcode));
      CAPTURE(engineName(i.engine));
      const std::string err = errorOf(i);
      if (ok) {
        CHECK(err == "");
      } else {
        CHECK(contains(err, "engine " + std::string(engineName(i.engine)) + " cannot run it"));
      }
    }
  }
}

TEST_CASE("validation: partition count 1..128") {
  Instruction i = valid(Opcode::TensorCopy);
  i.srcs[0] = sb(0, 128, 0, kRow512);
  i.dst = sb(0, 128, 4096, kRow512);
  CHECK(errorOf(i) == "");
  i.dst.partitionCount = 129;
  i.srcs[0].partitionCount = 129;
  CHECK(errorOf(i) == "instruction 0 (tensor_copy): dst: 129 partitions exceeds 128");
  i.dst.partitionCount = 0;
  CHECK(errorOf(i) == "instruction 0 (tensor_copy): dst: 0 partitions (need at least 1)");
}

TEST_CASE("validation: start partition rule") {
  struct Case {
    int32_t start, count;
    bool ok;
  };
  const Case cases[] = {
      {0, 128, true},  {0, 65, true}, {32, 65, false}, {64, 64, true},
      {32, 64, false}, {0, 64, true}, {96, 32, true},  {32, 32, true},
      {16, 32, false}, {0, 1, true},  {97, 1, false},  {64, 33, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.start);
    CAPTURE(c.count);
    Instruction i = make(Opcode::Memset, Engine::Vector, sb(c.start, c.count, 0, kRow512));
    const std::string err = errorOf(i);
    if (c.ok) {
      CHECK(err == "");
    } else {
      CHECK(contains(err, "partitions must start at"));
    }
  }
  Instruction i = make(Opcode::Memset, Engine::Vector, sb(32, 64, 0, kRow512));
  CHECK(errorOf(i) == "instruction 0 (memset): dst: 64 partitions must start at 0 or 64, not 32");
}

TEST_CASE("validation: Vector, Scalar and GpSimd move data across partitions within a half") {
  struct Case {
    int32_t srcStart, dstStart, count;
    bool ok;
  };
  const Case cases[] = {
      {0, 0, 128, true},  {32, 0, 32, true},  {96, 64, 32, true},  {0, 32, 32, true},
      {64, 0, 32, false}, {64, 0, 64, false}, {32, 96, 32, false}, {96, 0, 32, false},
  };
  for (Engine engine : {Engine::Vector, Engine::Scalar, Engine::GpSimd})
    for (const Case& c : cases) {
      CAPTURE(c.srcStart);
      CAPTURE(c.dstStart);
      Instruction i = valid(Opcode::TensorCopy);
      i.engine = engine;
      i.srcs[0] = sb(c.srcStart, c.count, 0, kRow512);
      i.dst = sb(c.dstStart, c.count, 4096, kRow512);
      const std::string err = errorOf(i);
      if (c.ok) {
        CHECK(err == "");
      } else {
        CHECK(contains(err, "moves data across partitions only within a half of 64 (A1)"));
      }
    }
  Instruction i = valid(Opcode::TensorCopy);
  i.srcs[0] = ps(64, 32, 0, kRow512);
  i.dst = sb(0, 32, 0, kRow512);
  CHECK(errorOf(i) ==
        "instruction 0 (tensor_copy): srcs[0]: partitions [64, 96) move to [0, 32): vector moves "
        "data across partitions only within a half of 64 (A1)");
  Geometry small;
  small.partitions = 64;
  i = valid(Opcode::TensorCopy);
  i.srcs[0] = sb(32, 32, 0, kRow512);
  i.dst = sb(0, 32, 4096, kRow512);
  CHECK(errorOf(i) == "");
  CHECK(contains(errorOf(i, small), "only within a half of 32 (A1)"));
}

TEST_CASE("validation: partition range inside the geometry, and DMA may start anywhere") {
  Geometry small;
  small.partitions = 64;
  CHECK(errorOf(make(Opcode::Memset, Engine::Vector, sb(0, 64, 0, kRow512)), small) == "");
  CHECK(contains(errorOf(make(Opcode::Memset, Engine::Vector, sb(64, 32, 0, kRow512)), small),
                 "outside 0..64"));
  Instruction dma = valid(Opcode::DmaCopy);
  dma.dst = sb(5, 3, 0, kRow512);
  dma.srcs[0] = hbmView(0, 3, 512, 0, kRow512);
  CHECK(errorOf(dma) == "");
  dma.dst = sb(126, 3, 0, kRow512);
  CHECK(contains(errorOf(dma), "dst: partitions [126, 129) outside 0..128"));
}

TEST_CASE("validation: SBUF and PSUM byte range inside the partition") {
  const int64_t sbufBytes = 224 * 1024;
  Instruction i = make(Opcode::Memset, Engine::Vector, sb(0, 128, sbufBytes - 2048, kRow512));
  CHECK(errorOf(i) == "");
  i.dst.offset += 4;
  CHECK(
      errorOf(i) ==
      "instruction 0 (memset): dst: bytes [227332, 229380) outside the 229376-byte sbuf partition");
  i.dst.offset = -4;
  CHECK(contains(errorOf(i), "outside the 229376-byte sbuf partition"));
  // Negative steps reach below the offset.
  i.dst = sb(0, 128, 2044, {{-1, 512}});
  CHECK(errorOf(i) == "");
  i.dst.offset = 2040;
  CHECK(contains(errorOf(i), "bytes [-4, 2044)"));
  // PSUM: 16 KiB; bf16 counts 2 bytes per element.
  i.dst = ps(0, 128, 16 * 1024 - 1024, kRow512, Dtype::Bf16);
  CHECK(errorOf(i) == "");
  i.dst.offset += 2;
  CHECK(contains(errorOf(i), "outside the 16384-byte psum partition"));
  Geometry trn1;
  trn1.sbufPartitionBytes = 192 * 1024;
  i.dst = sb(0, 128, 192 * 1024 - 2048, kRow512);
  CHECK(errorOf(i, trn1) == "");
  i.dst.offset += 1;
  CHECK(contains(errorOf(i, trn1), "196608-byte sbuf"));
}

TEST_CASE("validation: at most 4 free dims on chip") {
  Instruction i =
      make(Opcode::Memset, Engine::Vector, sb(0, 128, 0, {{1, 2}, {1, 2}, {1, 2}, {1, 2}}));
  CHECK(errorOf(i) == "");
  i.dst.dims.push_back({1, 2});
  CHECK(errorOf(i) == "instruction 0 (memset): dst: 5 free dims exceed 4");
}

TEST_CASE("validation: dim num 1..65535 and step within int16") {
  Instruction i = make(Opcode::Memset, Engine::Vector, sb(0, 1, 0, {{0, 65535}}));
  CHECK(errorOf(i) == "");
  i.dst.dims[0].num = 65536;
  CHECK(errorOf(i) == "instruction 0 (memset): dst: dims[0] num 65536 exceeds 65535");
  i.dst.dims[0].num = 0;
  CHECK(errorOf(i) == "instruction 0 (memset): dst: dims[0] num 0 (need at least 1)");
  i.dst = sb(0, 1, 0, {{1, 1}, {32767, 2}}, Dtype::Uint8);
  CHECK(errorOf(i) == "");
  i.dst.dims[1].step = 32768;
  CHECK(errorOf(i) == "instruction 0 (memset): dst: dims[1] step 32768 outside -32768..32767");
  i.dst = sb(0, 1, 40000, {{-32768, 2}}, Dtype::Uint8);
  CHECK(errorOf(i) == "");
  i.dst.dims[0].step = -32769;
  CHECK(contains(errorOf(i), "step -32769 outside"));
}

TEST_CASE("validation: HBM access pattern inside its tensor with the tensor's dtype") {
  Instruction i = valid(Opcode::DmaCopy);
  i.srcs[0] = hbmView(0, 128, 512, 0, kRow512);
  CHECK(errorOf(i) == "");
  i.srcs[0] = hbmView(0, 128, 512, 1, kRow512);  // last element 65536 of 65536
  CHECK(
      errorOf(i) ==
      "instruction 0 (dma_copy): srcs[0]: elements [1, 65536] outside tensor 'a' (65536 elements)");
  i.srcs[0] = hbmView(0, 128, -512, 127 * 512, kRow512);  // rows walked backwards
  CHECK(errorOf(i) == "");
  i.srcs[0].offset -= 1;
  CHECK(contains(errorOf(i), "elements [-1, 65534]"));
  i.srcs[0] = hbmView(1, 128, 512, 0, kRow512, Dtype::Fp32);
  CHECK(errorOf(i) ==
        "instruction 0 (dma_copy): srcs[0]: dtype fp32 differs from tensor 'b' (bf16)");
  i.srcs[0] = hbmView(3, 128, 512, 0, kRow512);
  CHECK(contains(errorOf(i), "tensor index 3 out of range (3 tensors declared)"));
  i.srcs[0] = hbmView(-1, 128, 512, 0, kRow512);
  CHECK(contains(errorOf(i), "tensor index -1 out of range"));
}

TEST_CASE("validation: compute engines cannot reach HBM, and on-chip operands name no tensor") {
  Instruction i = valid(Opcode::TensorCopy);
  i.srcs[0] = hbmView(0, 128, 512, 0, kRow512);
  CHECK(errorOf(i) ==
        "instruction 0 (tensor_copy): srcs[0]: compute engines cannot access HBM (use dma_copy)");
  i = valid(Opcode::TensorCopy);
  i.dst.tensor = 0;
  CHECK(contains(errorOf(i), "dst: sbuf operand names tensor 0"));
  i = valid(Opcode::TensorCopy);
  i.dst.partitionStep = 512;
  CHECK(contains(errorOf(i), "partitions cannot be strided"));
}

TEST_CASE("validation: elementwise operands have equal partitions and free size") {
  Instruction i = valid(Opcode::TensorTensor);
  i.srcs[1] = sb(0, 128, 8192, {{1, 256}, {256, 2}});  // same free size, other shape: fine
  CHECK(errorOf(i) == "");
  i.srcs[1] = sb(0, 128, 8192, {{1, 511}});
  CHECK(errorOf(i) ==
        "instruction 0 (tensor_tensor): srcs[1]: [128 partitions, 511 free] does not match dst "
        "[128 partitions, 512 free]");
  i = valid(Opcode::Activation);
  i.srcs[0].partitionCount = 64;
  CHECK(contains(errorOf(i), "srcs[0]: [64 partitions, 512 free] does not match dst"));
}

TEST_CASE("validation: tensor_tensor inputs not both in PSUM") {
  Instruction i = valid(Opcode::TensorTensor);
  CHECK(errorOf(i) == "");
  i.srcs[0] = ps(0, 128, 2048, kRow512);
  CHECK(errorOf(i) == "instruction 0 (tensor_tensor): srcs: both inputs cannot be in PSUM");
}

TEST_CASE("validation: DMA element counts equal, any shapes") {
  Instruction i = valid(Opcode::DmaCopy);
  i.dst = sb(0, 64, 0, {{1, 1024}});
  CHECK(errorOf(i) == "");
  i.dst = sb(0, 64, 0, {{1, 1023}});
  CHECK(errorOf(i) == "instruction 0 (dma_copy): dst: 65472 elements differ from srcs[0]'s 65536");
  i.dst = hbmView(2, 128, 512, 0, kRow512);  // HBM to HBM
  CHECK(errorOf(i) == "");
}

TEST_CASE("validation: DMA trigger engine and queue 0..15") {
  Instruction i = valid(Opcode::DmaCopy);
  i.dmaQueue = 15;
  CHECK(errorOf(i) == "");
  i.dmaQueue = 16;
  CHECK(errorOf(i) == "instruction 0 (dma_copy): queue: DMA queue 16 outside 0..15");
  i.dmaQueue = -1;
  CHECK(contains(errorOf(i), "DMA queue -1 outside 0..15"));
  Instruction c = valid(Opcode::Memset);
  c.dmaQueue = 0;
  CHECK(errorOf(c) == "instruction 0 (memset): queue: only DMA instructions take a queue (got 0)");
}

TEST_CASE("validation: nc_matmul K, M and N limits") {
  Instruction i = valid(Opcode::NcMatmul);
  i.srcs[0] = sb(0, 128, 0, {{1, 128}});
  i.srcs[1] = sb(0, 128, 1024, kRow512);
  i.dst = ps(0, 128, 0, kRow512);
  CHECK(errorOf(i) == "");
  SUBCASE("M=129") {
    i.srcs[0].dims = {{1, 129}};
    CHECK(contains(errorOf(i), "srcs[0] (stationary): M=129 free exceeds 128"));
  }
  SUBCASE("N=513") {
    i.srcs[1].dims = {{1, 513}};
    i.dst.dims = {{1, 513}};
    CHECK(errorOf(i) == "instruction 0 (nc_matmul): srcs[1] (moving): N=513 free exceeds 512");
  }
  SUBCASE("K beyond 128 on a wider machine") {
    Geometry wide;
    wide.partitions = 256;
    i.srcs[0].partitionCount = 129;
    i.srcs[1].partitionCount = 129;
    CHECK(contains(errorOf(i, wide), "srcs[0] (stationary): K=129 partitions exceeds 128"));
  }
  SUBCASE("moving K differs") {
    i.srcs[1].partitionCount = 64;
    CHECK(contains(errorOf(i), "srcs[1] (moving): K=64 partitions differs from stationary K=128"));
  }
  SUBCASE("N limit follows the geometry") {
    Geometry small;
    small.maxMovingFree = 256;
    CHECK(contains(errorOf(i, small), "N=512 free exceeds 256"));
  }
  SUBCASE("K and M follow the PE array (pe_rows, pe_cols)") {
    Geometry pe;
    pe.peRows = 64;
    CHECK(contains(errorOf(i, pe), "srcs[0] (stationary): K=128 partitions exceeds 64"));
    pe.peRows = 128;
    pe.peCols = 96;
    CHECK(contains(errorOf(i, pe), "srcs[0] (stationary): M=128 free exceeds 96"));
    i.srcs[0].dims = {{1, 96}};
    i.dst.partitionCount = 96;
    CHECK(errorOf(i, pe) == "");
  }
  SUBCASE("a wider PE array than the partitions is capped by them") {
    Geometry wide;
    wide.peRows = 256;
    wide.peCols = 256;
    i.srcs[0].dims = {{1, 129}};
    CHECK(contains(errorOf(i, wide), "M=129 free exceeds 128"));
  }
}

TEST_CASE("validation: nc_matmul placement and dtypes") {
  Instruction i = valid(Opcode::NcMatmul);
  SUBCASE("inputs in SBUF") {
    i.srcs[1].space = Space::Psum;
    i.srcs[1].offset = 0;
    CHECK(contains(errorOf(i), "srcs[1] (moving): must be in SBUF"));
  }
  SUBCASE("dst in PSUM") {
    i.dst.space = Space::Sbuf;
    CHECK(contains(errorOf(i), "dst: must be in PSUM"));
  }
  SUBCASE("dst fp32") {
    i.dst.dtype = Dtype::Bf16;
    CHECK(contains(errorOf(i), "dst: must be fp32, not bf16"));
  }
  SUBCASE("dst shape [M, N]") {
    i.dst = ps(0, 128, 0, kRow512);
    CHECK(contains(errorOf(i),
                   "dst: [128 partitions, 512 free] must be [M=64 partitions, N=512 free]"));
  }
  SUBCASE("fp32 not mixed with bf16") {
    i.srcs[0].dtype = Dtype::Bf16;
    CHECK(contains(errorOf(i), "srcs: fp32 cannot be mixed with bf16"));
  }
  SUBCASE("bf16 with fp8 is fine") {
    i.srcs[0].dtype = Dtype::Bf16;
    i.srcs[1].dtype = Dtype::Fp8E4m3;
    CHECK(errorOf(i) == "");
  }
  SUBCASE("integer inputs rejected") {
    i.srcs[0].dtype = Dtype::Int32;
    i.srcs[1].dtype = Dtype::Int32;
    CHECK(contains(errorOf(i), "dtype int32 is not a float type"));
  }
}

TEST_CASE("validation: nc_matmul dst inside one PSUM bank") {
  Instruction i = valid(Opcode::NcMatmul);
  i.dst.offset = 2048;  // bank 1 exactly
  CHECK(errorOf(i) == "");
  i.dst.offset = 2044;
  CHECK(errorOf(i) ==
        "instruction 0 (nc_matmul): dst: bytes [2044, 4092) cross a 2048-byte PSUM bank");
  i.srcs[1].dims = {{1, 2}};
  i.dst = ps(0, 64, 0x7F8, {{1, 2}});  // last two fp32 of bank 0
  CHECK(errorOf(i) == "");
  i.dst.offset = 0x7FC;
  CHECK(contains(errorOf(i), "cross a 2048-byte PSUM bank"));
}

TEST_CASE("validation: nc_transpose limits per engine") {
  Instruction t = make(Opcode::NcTranspose, Engine::Tensor, ps(0, 128, 0, {{1, 128}}),
                       {sb(0, 128, 0, {{1, 128}})});
  CHECK(errorOf(t) == "");
  t.srcs[0].dims = {{1, 129}};
  CHECK(
      contains(errorOf(t), "srcs[0]: [128 partitions, 129 free] exceeds the tensor limit 128x128"));
  Geometry pe;  // TensorE transposes as a matmul of src: partitions <= pe_rows, free <= pe_cols
  pe.peRows = 64;
  pe.peCols = 32;
  t.srcs[0].dims = {{1, 128}};
  CHECK(contains(errorOf(t, pe), "[128 partitions, 128 free] exceeds the tensor limit 64x32"));
  t.srcs[0].partitionCount = 64;
  t.srcs[0].dims = {{1, 32}};
  t.dst = ps(0, 32, 0, {{1, 64}});
  CHECK(errorOf(t, pe) == "");
  Instruction v = make(Opcode::NcTranspose, Engine::Vector, sb(0, 32, 0, {{1, 32}}),
                       {sb(0, 32, 128, {{1, 32}})});
  CHECK(errorOf(v) == "");
  v.srcs[0].dims = {{1, 33}};
  v.dst.partitionCount = 33;
  CHECK(contains(errorOf(v), "exceeds the vector limit 32x32"));
}

TEST_CASE("validation: nc_transpose shapes and Tensor placement") {
  Instruction t = make(Opcode::NcTranspose, Engine::Tensor, ps(0, 64, 0, {{1, 128}}),
                       {sb(0, 128, 0, {{1, 64}})});
  CHECK(errorOf(t) == "");
  t.dst = ps(0, 128, 0, {{1, 64}});
  CHECK(contains(
      errorOf(t),
      "dst: [128 partitions, 64 free] must be [64 partitions, 128 free] (srcs[0] transposed)"));
  t.dst = sb(0, 64, 0, {{1, 128}});
  CHECK(contains(errorOf(t), "dst: must be in PSUM"));
  Instruction v =
      make(Opcode::NcTranspose, Engine::Vector, ps(0, 32, 0, {{1, 16}}), {sb(0, 16, 0, {{1, 32}})});
  CHECK(errorOf(v) == "");  // Vector may write anywhere on chip
}

TEST_CASE("validation: GpSimd cannot access PSUM, but its DMAs may") {
  Instruction i = valid(Opcode::TensorCopy);
  i.engine = Engine::Vector;
  CHECK(errorOf(i) == "");
  i.engine = Engine::GpSimd;
  CHECK(errorOf(i) == "instruction 0 (tensor_copy): srcs[0]: GpSimd cannot access PSUM");
  Instruction d = valid(Opcode::DmaCopy);
  d.engine = Engine::GpSimd;
  d.dst = ps(0, 128, 0, kRow512);
  CHECK(errorOf(d) == "");
}

TEST_CASE("validation: Scalar tensor_scalar only multiply/add combinations") {
  struct Case {
    AluOp op0, op1;
    bool ok;
  };
  const Case cases[] = {
      {AluOp::Multiply, AluOp::Add, true},     {AluOp::Multiply, AluOp::Bypass, true},
      {AluOp::Add, AluOp::Bypass, true},       {AluOp::Add, AluOp::Multiply, false},
      {AluOp::Subtract, AluOp::Bypass, false}, {AluOp::Max, AluOp::Bypass, false},
  };
  for (const Case& c : cases) {
    Instruction i = valid(Opcode::TensorScalar);
    i.op0 = c.op0;
    i.op1 = c.op1;
    i.engine = Engine::Vector;
    CHECK(errorOf(i) == "");
    i.engine = Engine::Scalar;
    CAPTURE(aluOpName(c.op0));
    CAPTURE(aluOpName(c.op1));
    CHECK((errorOf(i) == "") == c.ok);
  }
}

TEST_CASE("validation: [P,1] vectors for scale, bias, reduce_dst and scalar operands") {
  Instruction i = valid(Opcode::Activation);
  i.scale.vec = sb(0, 128, 8192, {{1, 1}});
  i.bias = sb(0, 128, 8196, {});
  i.reduceDst = sb(0, 128, 8200, {{1, 1}});
  CHECK(errorOf(i) == "");
  SUBCASE("scale P differs") {
    i.scale.vec->partitionCount = 64;
    CHECK(
        errorOf(i) ==
        "instruction 0 (activation): scale: must be [P,1] with P=128, got [64 partitions, 1 free]");
  }
  SUBCASE("bias two wide") {
    i.bias->dims = {{1, 2}};
    CHECK(contains(errorOf(i), "bias: must be [P,1] with P=128, got [128 partitions, 2 free]"));
  }
  SUBCASE("reduce_dst P differs") {
    i.reduceDst->partitionCount = 32;
    CHECK(contains(errorOf(i), "reduce_dst: must be [P,1]"));
  }
  SUBCASE("tensor_scalar operand1") {
    Instruction t = valid(Opcode::TensorScalar);
    t.operand1.vec = sb(0, 128, 8192, {{1, 1}});
    CHECK(errorOf(t) == "");
    t.operand1.vec->dims = {{1, 4}};
    CHECK(contains(errorOf(t), "operand1: must be [P,1]"));
  }
}

TEST_CASE("validation: tensor_reduce axes, op and dst shape") {
  Instruction i = valid(Opcode::TensorReduce);
  CHECK(errorOf(i) == "");
  i.reduceAxes = 2;
  i.dst.dims = {{1, 1}};
  CHECK(errorOf(i) == "");
  i.reduceAxes = 3;
  CHECK(errorOf(i) ==
        "instruction 0 (tensor_reduce): reduce_axes: 3 outside 1..2 (srcs[0] free dims)");
  i.reduceAxes = 0;
  CHECK(contains(errorOf(i), "reduce_axes: 0 outside 1..2"));
  i.reduceAxes = 1;
  i.dst.dims = {{1, 64}};
  CHECK(contains(errorOf(i), "dst: [128 partitions, 64 free] must be [128 partitions, 8 free]"));
  i = valid(Opcode::TensorReduce);
  i.op0 = AluOp::Subtract;
  CHECK(contains(errorOf(i), "op0: subtract is not a reduction"));
}

TEST_CASE("validation: dma_transpose 2- or 4-byte dtypes, transposed shape") {
  Instruction i = valid(Opcode::DmaTranspose);
  CHECK(errorOf(i) == "");
  i.srcs[0] = hbmView(0, 128, 512, 0, {{1, 64}});
  i.dst.dtype = Dtype::Fp32;
  CHECK(errorOf(i) == "");
  i.dst.dtype = Dtype::Fp8E4m3;
  CHECK(errorOf(i) ==
        "instruction 0 (dma_transpose): dst: dtype fp8_e4m3 is not a 2- or 4-byte type");
  i = valid(Opcode::DmaTranspose);
  i.dst = sb(0, 128, 0, {{1, 64}}, Dtype::Bf16);
  CHECK(contains(errorOf(i), "must be [64 partitions, 128 free] (srcs[0] transposed)"));
}

TEST_CASE("validation: dma_transpose from HBM or SBUF into SBUF") {
  Instruction i = valid(Opcode::DmaTranspose);
  i.srcs[0] = sb(0, 128, 0x1000, {{1, 64}}, Dtype::Bf16);  // SBUF -> SBUF
  CHECK(errorOf(i) == "");
  i.srcs[0].space = Space::Psum;
  CHECK(errorOf(i) ==
        "instruction 0 (dma_transpose): srcs[0]: must be in HBM or SBUF (DMA transpose reads HBM "
        "or SBUF)");
  i = valid(Opcode::DmaTranspose);
  i.dst = hbmView(1, 64, 128, 0, {{1, 128}}, Dtype::Bf16);
  CHECK(errorOf(i) ==
        "instruction 0 (dma_transpose): dst: must be in SBUF (DMA transpose writes SBUF)");
  i.dst = ps(0, 64, 0, {{1, 128}}, Dtype::Bf16);
  CHECK(contains(errorOf(i), "dst: must be in SBUF"));
}

TEST_CASE("validation: iota and affine_select pattern nums equal dst dims") {
  Instruction i = valid(Opcode::Iota);
  CHECK(errorOf(i) == "");
  i.affine.pattern[1].num = 7;
  CHECK(errorOf(i) == "instruction 0 (iota): pattern: nums must equal dst's dims' nums");
  Instruction s = valid(Opcode::AffineSelect);
  s.affine.pattern.push_back({1, 1});
  CHECK(contains(errorOf(s), "pattern: nums must equal"));
}

TEST_CASE("validation: semaphore ids in range") {
  Instruction i = valid(Opcode::Memset);
  i.waits = {{2, 1}};
  i.signals = {{0, SignalAt::Read, 1}};
  CHECK(errorOf(i) == "");
  i.waits = {{0, 1}, {3, 1}};
  CHECK(errorOf(i) == "instruction 0 (memset): wait[1]: semaphore 3 out of range (3 declared)");
  i.waits.clear();
  i.signals = {{-1, SignalAt::Complete, 1}};
  CHECK(contains(errorOf(i), "signal[0]: semaphore -1 out of range"));
}

TEST_CASE("validation: number of sources per opcode") {
  Instruction i = valid(Opcode::TensorTensor);
  i.srcs.pop_back();
  CHECK(errorOf(i) == "instruction 0 (tensor_tensor): srcs: takes 2 sources, got 1");
  Instruction m = valid(Opcode::Memset);
  m.srcs.push_back(sb(0, 128, 0, kRow512));
  CHECK(contains(errorOf(m), "takes 0 sources, got 1"));
}

TEST_CASE("validation: program-level names and shapes") {
  Program p = withInstruction(valid(Opcode::Memset));
  CHECK(errorOf(p) == "");
  Program dup = p;
  dup.tensors[1].name = dup.tensors[0].name;  // "a"; a literal here trips GCC 12's -Wrestrict
  CHECK(errorOf(dup) == "tensor 'a' declared twice");
  Program badSem = p;
  badSem.semaphores[0] = "2x";
  CHECK(contains(errorOf(badSem), "semaphore '2x': names are letters"));
  Program zero = p;
  zero.tensors[0].shape = {128, 0};
  CHECK(errorOf(zero) == "tensor 'a' has shape [128,0] with an extent below 1");
}

TEST_CASE("validation: extreme field values are errors, not overflows") {
  Instruction i = make(Opcode::Memset, Engine::Vector, sb(0, 128, INT64_MAX, kRow512));
  CHECK(contains(errorOf(i), "outside the 229376-byte sbuf partition"));
  i.dst.offset = INT64_MIN;
  CHECK(contains(errorOf(i), "outside the 229376-byte sbuf partition"));
  Instruction d = valid(Opcode::DmaCopy);
  d.srcs[0] = hbmView(0, 128, INT64_MAX, INT64_MAX, {{INT64_MIN, 2}});
  CHECK(contains(errorOf(d), "outside tensor 'a'"));
  d.srcs[0] = hbmView(0, 1, 0, 0, {{1, INT64_MAX}, {1, INT64_MAX}});
  CHECK(contains(errorOf(d), "covers more than 4294967296 elements (the per-tensor limit)"));
  d.srcs[0] = hbmView(0, 1, 0, 0, {{1, 65536}, {1, 65536}});  // exactly the limit: no overflow
  CHECK_FALSE(contains(errorOf(d), "covers more than"));
  d.srcs[0] = hbmView(0, 2, 0, 0, {{1, 65536}, {1, 65536}});
  CHECK(contains(errorOf(d), "covers more than 4294967296 elements"));
  Program huge = withInstruction(valid(Opcode::Memset));
  huge.tensors[0].shape = {INT64_MAX, 2};
  CHECK(errorOf(huge) ==
        "tensor 'a' has shape [9223372036854775807,2]: more than 2^63 elements, over the limit "
        "of 4294967296 per tensor");
  huge.tensors[0].shape = {65536, 65537};
  CHECK(contains(errorOf(huge), "4295032832 elements, over the limit of 4294967296 per tensor"));
}

namespace {

/// A small deterministic generator (xorshift64*).
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  int64_t in(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  template <typename T>
  T pick(std::initializer_list<T> items) {
    return items.begin()[next() % items.size()];
  }
};

AccessPattern randomAp(Rng& r, bool allowHbm) {
  const Space space = allowHbm && r.in(0, 2) == 0 ? Space::Hbm : r.pick({Space::Sbuf, Space::Psum});
  const Dtype dtype =
      space == Space::Hbm ? Dtype::Fp32 : static_cast<Dtype>(r.in(0, kNumDtypes - 1));
  const int32_t count = r.pick({1, 2, 32, 64, 128});
  std::vector<Dim> dims;
  for (int64_t j = r.in(0, 2); j > 0; --j)
    dims.push_back({r.in(-2, 4), r.pick<int64_t>({1, 2, 4, 8})});
  if (space == Space::Hbm) return hbmView(0, count, r.in(0, 16), r.in(0, 64), dims);
  return chip(space, count <= 32 ? 32 * static_cast<int32_t>(r.in(0, 3)) : 0, count,
              4 * r.in(0, 64), dims, dtype);
}

int64_t sourcesOf(Opcode op) {
  return static_cast<int64_t>(valid(op).srcs.size());
}

}  // namespace

TEST_CASE("validation: whatever passes validation runs on the interpreter without an error") {
  Rng r;
  int valid = 0;
  MemoryState memory(withInstruction(Instruction{}), Geometry{});  // same tensors every time
  for (int n = 0; n < 10000; ++n) {
    Instruction i;
    i.opcode = static_cast<Opcode>(r.in(0, kNumOpcodes - 1));
    i.engine = static_cast<Engine>(r.in(0, kNumEngines - 1));
    i.dmaQueue = isDma(i.opcode) ? static_cast<int32_t>(r.in(0, 15)) : -1;
    i.dst = randomAp(r, isDma(i.opcode));
    const int64_t numSrcs = r.in(0, 3) == 0 ? r.in(0, 2) : sourcesOf(i.opcode);
    for (int64_t k = 0; k < numSrcs; ++k) {
      AccessPattern src = randomAp(r, isDma(i.opcode));
      if (r.in(0, 3) != 0 && src.space != Space::Hbm && i.dst.space != Space::Hbm) {
        src.partitionStart = i.dst.partitionStart;  // same shape as dst, usually
        src.partitionCount = i.dst.partitionCount;
        src.dims = i.dst.dims;
      }
      i.srcs.push_back(src);
    }
    i.op0 = static_cast<AluOp>(r.in(0, 12));
    i.op1 = static_cast<AluOp>(r.in(0, 12));
    i.act = static_cast<ActFn>(r.in(0, 11));
    if (r.in(0, 3) == 0) i.operand0.vec = randomAp(r, false);
    if (r.in(0, 3) == 0) i.scale.vec = randomAp(r, false);
    if (r.in(0, 3) == 0) i.bias = randomAp(r, false);
    if (r.in(0, 3) == 0) i.reduceDst = randomAp(r, false);
    i.reduceAxes = static_cast<int32_t>(r.in(1, 2));
    i.affine.pattern = i.dst.dims;
    i.affine.channelMultiplier = r.in(-2, 2);
    const Program p = withInstruction(i);
    if (!errorOf(p).empty()) continue;
    ++valid;
    CAPTURE(n);
    CHECK_NOTHROW(interpret(p, memory));
  }
  CHECK(valid > 500);
}
