// Hardware rules a program must keep: engines per opcode, operand placement, shapes, semaphores.
#include "isa/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "isa/error.h"
#include "isa/footprint.h"
#include "isa/operands.h"
#include "isa/size_limits.h"

namespace neuronsim::isa {

namespace {

constexpr uint8_t bit(Engine e) {
  return static_cast<uint8_t>(1u << static_cast<int>(e));
}
constexpr uint8_t kSync = bit(Engine::Sync);
constexpr uint8_t kTensor = bit(Engine::Tensor);
constexpr uint8_t kVector = bit(Engine::Vector);
constexpr uint8_t kScalar = bit(Engine::Scalar);
constexpr uint8_t kGpSimd = bit(Engine::GpSimd);

/// How an opcode's dst relates to its srcs.
enum class ShapeRule {
  Matmul,
  Transpose,
  Elementwise,
  Reduce,
  DstOnly,
  Affine,
  AffineElementwise,
  DmaCopy,
  DmaTranspose
};

/// Where an opcode may run and what it takes (reference 2.1, I1 HEAD).
struct OpcodeRule {
  Opcode opcode;
  uint8_t engines;
  int numSrcs;
  ShapeRule shape;
};

// Engines per opcode: reference 2.1 (I1 HEAD). DMAs are triggered from the Sync or Scalar
// sequencer (hwdge) or GpSimd (swdge), D3.
// clang-format off
constexpr OpcodeRule kOpcodeRules[kNumOpcodes] = {
    {.opcode = Opcode::NcMatmul,           .engines = kTensor,                    .numSrcs = 2, .shape = ShapeRule::Matmul},
    {.opcode = Opcode::NcTranspose,        .engines = kTensor | kVector,          .numSrcs = 1, .shape = ShapeRule::Transpose},
    {.opcode = Opcode::Activation,         .engines = kScalar,                    .numSrcs = 1, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::TensorTensor,       .engines = kVector | kGpSimd,          .numSrcs = 2, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::TensorScalar,       .engines = kVector | kScalar | kGpSimd, .numSrcs = 1, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::ScalarTensorTensor, .engines = kVector,                    .numSrcs = 2, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::TensorReduce,       .engines = kVector,                    .numSrcs = 1, .shape = ShapeRule::Reduce},
    {.opcode = Opcode::TensorCopy,         .engines = kVector | kScalar | kGpSimd, .numSrcs = 1, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::CopyPredicated,     .engines = kVector,                    .numSrcs = 2, .shape = ShapeRule::Elementwise},
    {.opcode = Opcode::Memset,             .engines = kVector | kGpSimd,          .numSrcs = 0, .shape = ShapeRule::DstOnly},
    {.opcode = Opcode::Iota,               .engines = kGpSimd,                    .numSrcs = 0, .shape = ShapeRule::Affine},
    {.opcode = Opcode::AffineSelect,       .engines = kGpSimd,                    .numSrcs = 1, .shape = ShapeRule::AffineElementwise},
    {.opcode = Opcode::DmaCopy,            .engines = kSync | kScalar | kGpSimd,  .numSrcs = 1, .shape = ShapeRule::DmaCopy},
    {.opcode = Opcode::DmaTranspose,       .engines = kSync | kScalar | kGpSimd,  .numSrcs = 1, .shape = ShapeRule::DmaTranspose},
};
// clang-format on

constexpr bool rulesInOpcodeOrder() {
  for (int i = 0; i < kNumOpcodes; ++i)
    if (static_cast<int>(kOpcodeRules[i].opcode) != i) return false;
  return true;
}
static_assert(rulesInOpcodeOrder(), "kOpcodeRules must list opcodes in enum order");

/// Free-axis access-pattern fields of SBUF/PSUM operands (A1: up to 4 dims, uint16 sizes,
/// int16 strides in elements).
struct OnChipLimits {
  size_t maxFreeDims;
  int64_t maxNum;
  int64_t minStep;
  int64_t maxStep;
};
constexpr OnChipLimits kOnChip{
    .maxFreeDims = 4, .maxNum = 65535, .minStep = -32768, .maxStep = 32767};

/// A partition count up to `maxCount` must start at a multiple of `alignment`; larger counts
/// start at 0. ISA semantics, not machine size (reference 1.3, A1): the partition quadrants (32)
/// and halves (64) are the cross-partition units of the Vector/Scalar/GpSimd datapaths, stated in
/// absolute partitions, so they stay constants while `partitions` is a machine parameter.
struct StartRule {
  int32_t maxCount;
  int32_t alignment;
  const char* allowed;
};
constexpr StartRule kStartRules[] = {
    {.maxCount = kQuadrantPartitions,
     .alignment = kQuadrantPartitions,
     .allowed = "0, 32, 64 or 96"},
    {.maxCount = 64, .alignment = 64, .allowed = "0 or 64"},
};

/// VectorE nc_transpose block: 32x32. ISA semantics, not machine size: the width of VectorE's
/// 32-lane reshape banks (reference 1.3, A1; 2.1, I1). TensorE's limit is the geometry's PE array.
constexpr int64_t kVectorTransposeBlock = 32;

/// The tensor_scalar op pairs ScalarE supports: mult+add, mult, add (reference 2.1).
struct OpPair {
  AluOp op0;
  AluOp op1;
};
constexpr OpPair kScalarEngineTensorScalar[] = {
    {AluOp::Multiply, AluOp::Add}, {AluOp::Multiply, AluOp::Bypass}, {AluOp::Add, AluOp::Bypass}};

constexpr AluOp kReduceOps[] = {AluOp::Add, AluOp::Max, AluOp::Min};

std::string engineList(uint8_t engines) {
  std::string out;
  for (int e = 0; e < kNumEngines; ++e) {
    if (!(engines & (1u << e))) continue;
    if (!out.empty()) out += ", ";
    out += engineName(static_cast<Engine>(e));
  }
  return out;
}

std::string shapeText(const AccessPattern& ap) {
  return fmt::format("[{} partitions, {} free]", ap.partitionCount, ap.freeSize());
}

bool isName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

/// Checks one instruction; every failure names the instruction, the operand and the rule.
class InstructionChecker {
 public:
  InstructionChecker(const Program& program, int64_t index, const Geometry& geometry)
      : program_(program),
        index_(index),
        geometry_(geometry),
        inst_(program.instructions.at(index)) {}

  void run() {
    if (static_cast<int>(inst_.opcode) >= kNumOpcodes) fail("", "unknown opcode");
    if (static_cast<int>(inst_.engine) >= kNumEngines) fail("", "unknown engine");
    const OpcodeRule& rule = kOpcodeRules[static_cast<int>(inst_.opcode)];
    checkEngine(rule);
    if (static_cast<int>(inst_.srcs.size()) != rule.numSrcs)
      fail("srcs", fmt::format("takes {} sources, got {}", rule.numSrcs, inst_.srcs.size()));
    checkOperands();
    checkShapes(rule);
    checkSemaphores();
  }

 private:
  [[noreturn]] void fail(std::string_view operand, const std::string& rule) const {
    std::string msg = fmt::format("instruction {} (", index_);
    msg += opcodeName(inst_.opcode);
    msg += "): ";
    if (!operand.empty()) {
      msg += operand;
      msg += ": ";
    }
    msg += rule;
    throw Error(msg);
  }
  /// fail() naming operand `slot` (the name is built only on failure).
  [[noreturn]] void failAt(int slot, const std::string& rule) const {
    fail(operandName(inst_, slot), rule);
  }

  bool dma() const { return isDma(inst_.opcode); }

  void checkEngine(const OpcodeRule& rule) const {
    if (!(rule.engines & bit(inst_.engine)))
      fail("", fmt::format("engine {} cannot run it (allowed: {})", engineName(inst_.engine),
                           engineList(rule.engines)));
    if (dma() && (inst_.dmaQueue < 0 || inst_.dmaQueue >= geometry_.dmaQueues))
      fail("queue",
           fmt::format("DMA queue {} outside 0..{}", inst_.dmaQueue, geometry_.dmaQueues - 1));
    if (!dma() && inst_.dmaQueue != -1)
      fail("queue", fmt::format("only DMA instructions take a queue (got {})", inst_.dmaQueue));
  }

  void checkOperands() const {
    forEachOperand(inst_, [&](const AccessPattern& ap, int slot, bool) { checkAp(ap, slot); });
  }

  void checkAp(const AccessPattern& ap, int slot) const {
    if (ap.partitionCount < 1)
      failAt(slot, fmt::format("{} partitions (need at least 1)", ap.partitionCount));
    int64_t elements = ap.partitionCount;
    for (size_t j = 0; j < ap.dims.size(); ++j) {
      const Dim& d = ap.dims[j];
      if (d.num < 1) failAt(slot, fmt::format("dims[{}] num {} (need at least 1)", j, d.num));
      const std::optional<int64_t> product = checkedMul(elements, d.num);
      if (!product || *product > kMaxTensorElements)
        failAt(slot, fmt::format("covers more than {} elements (the per-tensor limit)",
                                 kMaxTensorElements));
      elements = *product;
    }
    if (ap.space == Space::Hbm) {
      checkHbmAp(ap, slot);
    } else {
      checkOnChipAp(ap, slot);
    }
  }

  void checkHbmAp(const AccessPattern& ap, int slot) const {
    if (!dma()) failAt(slot, "compute engines cannot access HBM (use dma_copy)");
    const int64_t numTensors = static_cast<int64_t>(program_.tensors.size());
    if (ap.tensor < 0 || ap.tensor >= numTensors)
      failAt(slot, fmt::format("tensor index {} out of range ({} tensors declared)", ap.tensor,
                               numTensors));
    const TensorDecl& t = program_.tensors[ap.tensor];
    if (ap.dtype != t.dtype)
      failAt(slot, fmt::format("dtype {} differs from tensor '{}' ({})", dtypeName(ap.dtype),
                               t.name, dtypeName(t.dtype)));
    if (ap.partitionStart != 0)
      failAt(slot, fmt::format("HBM access patterns have no partition start (got {})",
                               ap.partitionStart));
    const ElementSpan s = elementSpan(ap);
    auto at = [&](int64_t reach) {  // offset + reach, saturated
      return checkedAdd(ap.offset, reach).value_or(reach < 0 ? INT64_MIN : INT64_MAX);
    };
    const int64_t lo = at(s.lo), hi = at(s.hi);
    if (lo < 0 || hi >= t.numElements())
      failAt(slot, fmt::format("elements [{}, {}] outside tensor '{}' ({} elements)", lo, hi,
                               t.name, t.numElements()));
  }

  void checkOnChipAp(const AccessPattern& ap, int slot) const {
    const auto space = spaceName(ap.space);
    if (ap.tensor != -1)
      failAt(slot, fmt::format("{} operand names tensor {} (must be -1)", space, ap.tensor));
    if (ap.partitionStep != 0)
      failAt(slot,
             fmt::format("partition step {} (partitions cannot be strided)", ap.partitionStep));
    if (ap.partitionCount > geometry_.partitions)
      failAt(slot,
             fmt::format("{} partitions exceeds {}", ap.partitionCount, geometry_.partitions));
    const int64_t end = static_cast<int64_t>(ap.partitionStart) + ap.partitionCount;
    if (ap.partitionStart < 0 || end > geometry_.partitions)
      failAt(slot, fmt::format("partitions [{}, {}) outside 0..{}", ap.partitionStart, end,
                               geometry_.partitions));
    if (!dma()) checkStartPartition(ap, slot);
    if (inst_.engine == Engine::GpSimd && ap.space == Space::Psum && !dma())
      failAt(slot, "GpSimd cannot access PSUM");
    if (ap.dims.size() > kOnChip.maxFreeDims)
      failAt(slot, fmt::format("{} free dims exceed {}", ap.dims.size(), kOnChip.maxFreeDims));
    for (size_t j = 0; j < ap.dims.size(); ++j) {
      const Dim& d = ap.dims[j];
      if (d.num > kOnChip.maxNum)
        failAt(slot, fmt::format("dims[{}] num {} exceeds {}", j, d.num, kOnChip.maxNum));
      if (d.step < kOnChip.minStep || d.step > kOnChip.maxStep)
        failAt(slot, fmt::format("dims[{}] step {} outside {}..{}", j, d.step, kOnChip.minStep,
                                 kOnChip.maxStep));
    }
    const int64_t limit =
        ap.space == Space::Sbuf ? geometry_.sbufPartitionBytes : geometry_.psumPartitionBytes;
    const Footprint box = footprintOf(ap);
    const int64_t lo = box.byteBegin, hi = box.byteEnd;
    if (lo < 0 || hi > limit)
      failAt(slot,
             fmt::format("bytes [{}, {}) outside the {}-byte {} partition", lo, hi, limit, space));
  }

  void checkStartPartition(const AccessPattern& ap, int slot) const {
    for (const StartRule& r : kStartRules) {
      if (ap.partitionCount > r.maxCount) continue;
      if (ap.partitionStart % r.alignment != 0)
        failAt(slot, fmt::format("{} partitions must start at {}, not {}", ap.partitionCount,
                                 r.allowed, ap.partitionStart));
      return;
    }
    if (ap.partitionStart != 0)
      failAt(slot, fmt::format("{} partitions must start at 0, not {}", ap.partitionCount,
                               ap.partitionStart));
  }

  void checkVector(const AccessPattern& vec, const AccessPattern& data,
                   std::string_view name) const {
    if (vec.partitionCount != data.partitionCount || vec.freeSize() != 1)
      fail(name,
           fmt::format("must be [P,1] with P={}, got {}", data.partitionCount, shapeText(vec)));
  }

  void checkSameShape(const AccessPattern& a, int slot, const AccessPattern& ref,
                      std::string_view refName) const {
    if (a.partitionCount != ref.partitionCount || a.freeSize() != ref.freeSize())
      failAt(slot, fmt::format("{} does not match {} {}", shapeText(a), refName, shapeText(ref)));
  }

  /// A1 (reference 1.3): Vector, Scalar and GpSimd move data across partitions only within a half
  /// of the partitions, so a source read at other partitions than the destination's stays in the
  /// destination's half.
  void checkPartitionMove(const AccessPattern& src, int slot) const {
    const AccessPattern& dst = inst_.dst;
    if (src.space == Space::Hbm || src.partitionStart == dst.partitionStart) return;
    const int32_t halfSize = geometry_.partitionHalf();
    auto half = [halfSize](int32_t p) { return p / halfSize; };
    const int32_t h = half(dst.partitionStart);
    const bool inHalf = half(src.partitionStart) == h &&
                        half(src.partitionStart + src.partitionCount - 1) == h &&
                        half(dst.partitionStart + dst.partitionCount - 1) == h;
    if (!inHalf)
      failAt(slot, fmt::format("partitions [{}, {}) move to [{}, {}): {} moves data across "
                               "partitions only within a half of {} (A1)",
                               src.partitionStart, src.partitionStart + src.partitionCount,
                               dst.partitionStart, dst.partitionStart + dst.partitionCount,
                               engineName(inst_.engine), halfSize));
  }

  void checkElementwise() const {
    for (size_t i = 0; i < inst_.srcs.size(); ++i) {
      const int slot = static_cast<int>(i) + 1;
      checkSameShape(inst_.srcs[i], slot, inst_.dst, "dst");
      checkPartitionMove(inst_.srcs[i], slot);
    }
    const AccessPattern& data = inst_.dst;
    if (inst_.operand0.vec) checkVector(*inst_.operand0.vec, data, "operand0");
    if (inst_.operand1.vec) checkVector(*inst_.operand1.vec, data, "operand1");
    if (inst_.scale.vec) checkVector(*inst_.scale.vec, data, "scale");
    if (inst_.bias) checkVector(*inst_.bias, data, "bias");
    if (inst_.reduceDst) checkVector(*inst_.reduceDst, data, "reduce_dst");
  }

  void checkOneBank(const AccessPattern& dst) const {
    const int64_t bank = geometry_.psumBankBytes();
    const Footprint box = footprintOf(dst);
    const int64_t lo = box.byteBegin, hi = box.byteEnd;
    if (bank <= 0 || lo / bank != (hi - 1) / bank)
      fail("dst", fmt::format("bytes [{}, {}) cross a {}-byte PSUM bank", lo, hi, bank));
  }

  void checkMatmul() const {
    const AccessPattern& stationary = inst_.srcs[0];
    const AccessPattern& moving = inst_.srcs[1];
    const char* names[] = {"srcs[0] (stationary)", "srcs[1] (moving)"};
    for (int i = 0; i < 2; ++i) {
      const AccessPattern& in = inst_.srcs[i];
      if (in.space != Space::Sbuf) fail(names[i], "must be in SBUF");
      if (!isFloat(in.dtype))
        fail(names[i], fmt::format("dtype {} is not a float type", dtypeName(in.dtype)));
    }
    if ((stationary.dtype == Dtype::Fp32) != (moving.dtype == Dtype::Fp32))
      fail("srcs", fmt::format("fp32 cannot be mixed with {}",
                               dtypeName(stationary.dtype == Dtype::Fp32 ? moving.dtype
                                                                         : stationary.dtype)));
    const int64_t k = stationary.partitionCount;
    const int64_t m = stationary.freeSize();
    const int64_t n = moving.freeSize();
    const int64_t maxK = geometry_.maxContraction();
    const int64_t maxM = geometry_.maxStationaryFree();
    if (k > maxK) fail(names[0], fmt::format("K={} partitions exceeds {}", k, maxK));
    if (m > maxM) fail(names[0], fmt::format("M={} free exceeds {}", m, maxM));
    if (moving.partitionCount != k)
      fail(names[1],
           fmt::format("K={} partitions differs from stationary K={}", moving.partitionCount, k));
    if (n > geometry_.maxMovingFree)
      fail(names[1], fmt::format("N={} free exceeds {}", n, geometry_.maxMovingFree));
    const AccessPattern& dst = inst_.dst;
    if (dst.space != Space::Psum) fail("dst", "must be in PSUM");
    if (dst.dtype != Dtype::Fp32)
      fail("dst", fmt::format("must be fp32, not {}", dtypeName(dst.dtype)));
    if (dst.partitionCount != m || dst.freeSize() != n)
      fail("dst", fmt::format("{} must be [M={} partitions, N={} free]", shapeText(dst), m, n));
    checkOneBank(dst);
  }

  void checkTranspose() const {
    const AccessPattern& src = inst_.srcs[0];
    const bool pe = inst_.engine == Engine::Tensor;  // a matmul of src (stationary): K x M
    const int64_t rows = pe ? geometry_.maxContraction() : kVectorTransposeBlock;
    const int64_t cols = pe ? geometry_.maxStationaryFree() : kVectorTransposeBlock;
    if (src.partitionCount > rows || src.freeSize() > cols)
      fail("srcs[0]", fmt::format("{} exceeds the {} limit {}x{}", shapeText(src),
                                  engineName(inst_.engine), rows, cols));
    checkTransposedShape(src);
    if (inst_.engine == Engine::Tensor) {
      if (src.space != Space::Sbuf) fail("srcs[0]", "must be in SBUF");
      if (inst_.dst.space != Space::Psum) fail("dst", "must be in PSUM");
      checkOneBank(inst_.dst);
    }
  }

  void checkTransposedShape(const AccessPattern& src) const {
    const AccessPattern& dst = inst_.dst;
    if (dst.partitionCount != src.freeSize() || dst.freeSize() != src.partitionCount)
      fail("dst", fmt::format("{} must be [{} partitions, {} free] (srcs[0] transposed)",
                              shapeText(dst), src.freeSize(), src.partitionCount));
  }

  void checkReduce() const {
    bool opOk = false;
    for (AluOp op : kReduceOps) opOk = opOk || op == inst_.op0;
    if (!opOk)
      fail("op0", fmt::format("{} is not a reduction (add, max or min)", aluOpName(inst_.op0)));
    const AccessPattern& src = inst_.srcs[0];
    const int64_t dims = static_cast<int64_t>(src.dims.size());
    if (inst_.reduceAxes < 1 || inst_.reduceAxes > dims)
      fail("reduce_axes",
           fmt::format("{} outside 1..{} (srcs[0] free dims)", inst_.reduceAxes, dims));
    int64_t kept = 1;
    checkPartitionMove(src, 1);
    for (int64_t j = 0; j < dims - inst_.reduceAxes; ++j) kept *= src.dims[j].num;
    if (inst_.dst.partitionCount != src.partitionCount || inst_.dst.freeSize() != kept)
      fail("dst", fmt::format("{} must be [{} partitions, {} free]", shapeText(inst_.dst),
                              src.partitionCount, kept));
  }

  void checkAffinePattern() const {
    const std::vector<Dim>& pattern = inst_.affine.pattern;
    bool match = pattern.size() == inst_.dst.dims.size();
    for (size_t j = 0; match && j < pattern.size(); ++j)
      match = pattern[j].num == inst_.dst.dims[j].num;
    if (!match) fail("pattern", "nums must equal dst's dims' nums");
  }

  void checkDmaTranspose() const {
    const AccessPattern& src = inst_.srcs[0];
    // A2: DMA transpose runs HBM->SBUF and SBUF->SBUF.
    if (inst_.dst.space != Space::Sbuf) fail("dst", "must be in SBUF (DMA transpose writes SBUF)");
    if (src.space == Space::Psum)
      fail("srcs[0]", "must be in HBM or SBUF (DMA transpose reads HBM or SBUF)");
    for (const auto& [ap, name] : {std::pair{&src, "srcs[0]"}, std::pair{&inst_.dst, "dst"}}) {
      const int bytes = dtypeBytes(ap->dtype);
      if (bytes != 2 && bytes != 4)
        fail(name, fmt::format("dtype {} is not a 2- or 4-byte type", dtypeName(ap->dtype)));
    }
    checkTransposedShape(src);
  }

  void checkShapes(const OpcodeRule& rule) const {
    switch (rule.shape) {
      case ShapeRule::Matmul:
        return checkMatmul();
      case ShapeRule::Transpose:
        return checkTranspose();
      case ShapeRule::Elementwise:
        checkElementwise();
        if (inst_.opcode == Opcode::TensorTensor && inst_.srcs[0].space == Space::Psum &&
            inst_.srcs[1].space == Space::Psum)
          fail("srcs", "both inputs cannot be in PSUM");
        if (inst_.opcode == Opcode::TensorScalar && inst_.engine == Engine::Scalar)
          checkScalarEngineOps();
        return;
      case ShapeRule::Reduce:
        return checkReduce();
      case ShapeRule::DstOnly:
        return;
      case ShapeRule::Affine:
        return checkAffinePattern();
      case ShapeRule::AffineElementwise:
        checkElementwise();
        return checkAffinePattern();
      case ShapeRule::DmaCopy:
        if (inst_.dst.numElements() != inst_.srcs[0].numElements())
          fail("dst", fmt::format("{} elements differ from srcs[0]'s {}", inst_.dst.numElements(),
                                  inst_.srcs[0].numElements()));
        return;
      case ShapeRule::DmaTranspose:
        return checkDmaTranspose();
    }
  }

  void checkScalarEngineOps() const {
    for (const OpPair& p : kScalarEngineTensorScalar)
      if (p.op0 == inst_.op0 && p.op1 == inst_.op1) return;
    fail("op0",
         fmt::format(
             "scalar engine tensor_scalar supports only multiply+add, multiply or add, not {}+{}",
             aluOpName(inst_.op0), aluOpName(inst_.op1)));
  }

  void checkSemaphores() const {
    const int64_t count = static_cast<int64_t>(program_.semaphores.size());
    auto check = [&](int32_t sem, const char* kind, size_t i) {
      if (sem < 0 || sem >= count)
        fail(fmt::format("{}[{}]", kind, i),
             fmt::format("semaphore {} out of range ({} declared)", sem, count));
    };
    for (size_t i = 0; i < inst_.waits.size(); ++i) check(inst_.waits[i].sem, "wait", i);
    for (size_t i = 0; i < inst_.signals.size(); ++i) check(inst_.signals[i].sem, "signal", i);
  }

  const Program& program_;
  int64_t index_;
  const Geometry& geometry_;
  const Instruction& inst_;
};

void checkNames(const std::vector<std::string>& names, const std::string& kind) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (!isName(names[i]))
      throw Error(fmt::format(
          "{} '{}': names are letters, digits and '_', not starting with a digit", kind, names[i]));
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i]) throw Error(fmt::format("{} '{}' declared twice", kind, names[i]));
  }
}

}  // namespace

void validateInstruction(const Program& program, int64_t index, const Geometry& geometry) {
  InstructionChecker(program, index, geometry).run();
}

void validateProgram(const Program& program, const Geometry& geometry) {
  std::vector<std::string> tensorNames;
  for (const TensorDecl& t : program.tensors) {
    tensorNames.push_back(t.name);
    checkedElements(t.shape, fmt::format("tensor '{}'", t.name));
  }
  checkNames(tensorNames, "tensor");
  checkNames(program.semaphores, "semaphore");
  for (size_t i = 0; i < program.instructions.size(); ++i)
    validateInstruction(program, static_cast<int64_t>(i), geometry);
}

}  // namespace neuronsim::isa
