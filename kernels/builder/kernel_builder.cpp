// KernelBuilder: declarations, allocation, instruction construction and automatic semaphores.
#include "kernels/builder/kernel_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "isa/dtype.h"
#include "isa/error.h"
#include "isa/footprint.h"
#include "isa/operands.h"
#include "isa/size_limits.h"
#include "isa/validation.h"
#include "kernels/builder/dependency_tracker.h"
#include "kernels/builder/tile_allocator.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kSbufAlignment = 64;

int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}

void applyScalar(const ScalarArg& arg, isa::ScalarOperand& into) {
  into.imm = arg.imm;
  if (arg.vec) into.vec = arg.vec->ap();
}

/// An instruction's opcode, engine and operands; the caller sets the rest.
isa::Instruction makeInstruction(isa::Opcode opcode, isa::Engine engine, isa::AccessPattern dst,
                                 std::vector<isa::AccessPattern> srcs) {
  isa::Instruction inst;
  inst.opcode = opcode;
  inst.engine = engine;
  inst.dst = std::move(dst);
  inst.srcs = std::move(srcs);
  return inst;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string kernel, const isa::Geometry& geometry)
    : kernel_(std::move(kernel)),
      geometry_(geometry),
      tracker_(std::make_unique<DependencyTracker>()),
      sbufAlloc_(std::make_unique<TileAllocator>(geometry.sbufPartitionBytes, 0, kSbufAlignment)),
      psumAlloc_(std::make_unique<TileAllocator>(geometry.psumPartitionBytes,
                                                 geometry.psumBankBytes(), kPsumAlignment)) {
  const int32_t queues = geometry.dmaQueues;
  if (queues < 1 || queues > isa::kMaxDmaQueues)
    throw Error(
        fmt::format("{}: {} DMA queues (supported: 1..{})", kernel_, queues, isa::kMaxDmaQueues));
  program_.semaphores = streamSemaphoreNames(queues);
  dmaQueues_.resize(isa::kNumEngines);
  nextQueue_.assign(isa::kNumEngines, 0);
  queueOwner_.assign(static_cast<size_t>(queues), -1);
  // Default round robins: GpSimd and Scalar each get the last eighth of the queues (at least one),
  // Sync the rest (16 queues: Sync 0..11, Scalar 12..13, GpSimd 14..15). Below 3 queues every
  // engine shares them all, and a queue is then owned by the first engine that uses it.
  const int32_t side = std::max(1, queues / 8);
  auto range = [](int32_t from, int32_t to) {
    std::vector<int32_t> r;
    for (int32_t q = from; q < to; ++q) r.push_back(q);
    return r;
  };
  const bool share = queues < 3;
  dmaQueues_[static_cast<int>(isa::Engine::Sync)] = range(0, share ? queues : queues - 2 * side);
  dmaQueues_[static_cast<int>(isa::Engine::Scalar)] =
      share ? range(0, queues) : range(queues - 2 * side, queues - side);
  dmaQueues_[static_cast<int>(isa::Engine::GpSimd)] =
      share ? range(0, queues) : range(queues - side, queues);
}

KernelBuilder::~KernelBuilder() = default;

HbmView KernelBuilder::declare(const std::string& name, const std::vector<int64_t>& shape,
                               isa::Dtype dtype, isa::TensorKind kind) {
  if (program_.tensorIndex(name) >= 0)
    throw Error(fmt::format("{}: HBM tensor '{}' declared twice", kernel_, name));
  for (int64_t d : shape)
    if (d < 1)
      throw Error(fmt::format("{}: HBM tensor '{}' has shape {} with an empty axis", kernel_, name,
                              isa::shapeString(shape)));
  program_.tensors.push_back(isa::TensorDecl{name, shape, dtype, kind});
  return HbmView(static_cast<int32_t>(program_.tensors.size() - 1), dtype,
                 StridedLayout::contiguous(shape), name);
}

HbmView KernelBuilder::input(const std::string& name, const std::vector<int64_t>& shape,
                             isa::Dtype dtype) {
  return declare(name, shape, dtype, isa::TensorKind::Input);
}
HbmView KernelBuilder::output(const std::string& name, const std::vector<int64_t>& shape,
                              isa::Dtype dtype) {
  return declare(name, shape, dtype, isa::TensorKind::Output);
}
HbmView KernelBuilder::internal(const std::string& name, const std::vector<int64_t>& shape,
                                isa::Dtype dtype) {
  return declare(name, shape, dtype, isa::TensorKind::Internal);
}

Tile KernelBuilder::allocate(isa::Space space, const std::vector<int64_t>& shape, isa::Dtype dtype,
                             const std::string& name) {
  const char* spaceText = space == isa::Space::Psum ? "PSUM" : "SBUF";
  const std::string tileName =
      name.empty() ? fmt::format("{}{}", space == isa::Space::Psum ? "psum" : "sbuf", tileCounter_)
                   : name;
  ++tileCounter_;
  if (shape.empty() || shape[0] < 1 || shape[0] > geometry_.partitions)
    throw Error(fmt::format("{}: {} tile '{}' shape {} needs 1..{} partitions first", kernel_,
                            spaceText, tileName, isa::shapeString(shape), geometry_.partitions));
  for (int64_t d : shape)
    if (d < 1)
      throw Error(fmt::format("{}: {} tile '{}' has an empty axis", kernel_, spaceText, tileName));
  const int64_t bytes = product(shape, 1) * isa::dtypeBytes(dtype);
  TileAllocator& alloc = space == isa::Space::Psum ? *psumAlloc_ : *sbufAlloc_;
  const int64_t offset = alloc.allocate(bytes);
  if (offset < 0)
    throw Error(fmt::format(
        "{}: {} tile '{}' asks {} bytes per partition but only {} of {} are free{}", kernel_,
        spaceText, tileName, bytes, alloc.capacity() - alloc.inUse(), alloc.capacity(),
        space == isa::Space::Psum ? fmt::format(" (in one place that respects the {}-byte banks)",
                                                geometry_.psumBankBytes())
                                  : std::string()));
  liveRecords(space)[offset] = allocations_.size();
  allocations_.push_back(AllocationRecord{
      space, tileName, offset, alloc.sizeAt(offset), static_cast<int32_t>(shape[0]), {}});
  std::vector<int64_t> freeShape(shape.begin() + 1, shape.end());
  return Tile(space, dtype, 0, static_cast<int32_t>(shape[0]), offset,
              StridedLayout::contiguous(freeShape), tileName);
}

Tile KernelBuilder::sbuf(const std::vector<int64_t>& shape, isa::Dtype dtype,
                         const std::string& name) {
  return allocate(isa::Space::Sbuf, shape, dtype, name);
}

Tile KernelBuilder::psum(const std::vector<int64_t>& shape, isa::Dtype dtype,
                         const std::string& name) {
  return allocate(isa::Space::Psum, shape, dtype, name);
}

void KernelBuilder::release(const Tile& tile) {
  if (tile.space() == isa::Space::Hbm)
    throw Error(fmt::format("{}: release of a non-tile", kernel_));
  TileAllocator& alloc = tile.space() == isa::Space::Psum ? *psumAlloc_ : *sbufAlloc_;
  if (!alloc.release(tile.baseBytes()))
    throw Error(fmt::format("{}: tile '{}' released but not allocated", kernel_, tile.name()));
  liveRecords(tile.space()).erase(tile.baseBytes());
}

int64_t KernelBuilder::sbufBytesInUse() const {
  return sbufAlloc_->inUse();
}
int64_t KernelBuilder::psumBytesInUse() const {
  return psumAlloc_->inUse();
}
int64_t KernelBuilder::sbufBytesFree() const {
  return sbufAlloc_->capacity() - sbufAlloc_->inUse();
}

void KernelBuilder::setDmaQueues(const std::vector<int32_t>& queues, isa::Engine issue) {
  if (queues.empty()) throw Error(fmt::format("{}: empty DMA queue list", kernel_));
  for (int32_t q : queues)
    if (q < 0 || q >= geometry_.dmaQueues)
      throw Error(fmt::format("{}: DMA queue {} is not 0..{} (the machine's dma_queues)", kernel_,
                              q, geometry_.dmaQueues - 1));
  dmaQueues_[static_cast<int>(issue)] = queues;
  nextQueue_[static_cast<int>(issue)] = 0;
}

int32_t KernelBuilder::nextDmaQueue(isa::Engine issue) {
  const int e = static_cast<int>(issue);
  const auto& pool = dmaQueues_[e];
  for (size_t tried = 0; tried < pool.size(); ++tried) {
    const int32_t q = pool[nextQueue_[e] % pool.size()];
    nextQueue_[e] = (nextQueue_[e] + 1) % pool.size();
    if (queueOwner_[q] < 0 || queueOwner_[q] == e) return q;
  }
  std::vector<std::string> owners;
  for (int32_t q : pool)
    owners.push_back(fmt::format(
        "{} by {}", q,
        isa::engineName(static_cast<isa::Engine>(queueOwner_[static_cast<size_t>(q)]))));
  throw Error(fmt::format(
      "{}: {} has no DMA queue left: its queues are all fed by other engines ({}), and a queue "
      "takes DMAs from one engine only (the machine has {} DMA queue{})",
      kernel_, isa::engineName(issue), fmt::join(owners, ", "), geometry_.dmaQueues,
      geometry_.dmaQueues == 1 ? "" : "s"));
}

void KernelBuilder::emitDma(isa::Opcode opcode, const DmaOperand& dst, const DmaOperand& src,
                            DmaOptions options) {
  isa::Instruction inst = makeInstruction(opcode, options.issue, dst.ap, {src.ap});
  inst.dmaQueue = options.queue;
  emit(std::move(inst));
}

void KernelBuilder::dmaCopy(const DmaOperand& dst, const DmaOperand& src, DmaOptions options) {
  if (dst.ap.numElements() != src.ap.numElements())
    throw Error(fmt::format("{}: dma_copy moves {} elements into {}", kernel_, src.ap.numElements(),
                            dst.ap.numElements()));
  emitDma(isa::Opcode::DmaCopy, dst, src, options);
}

void KernelBuilder::dmaTranspose(const DmaOperand& dst, const DmaOperand& src, DmaOptions options) {
  emitDma(isa::Opcode::DmaTranspose, dst, src, options);
}

void KernelBuilder::matmul(const Tile& dst, const Tile& stationary, const Tile& moving,
                           bool accumulate) {
  if (dst.space() != isa::Space::Psum)
    throw Error(fmt::format("{}: matmul output '{}' must be in PSUM", kernel_, dst.name()));
  const isa::AccessPattern out = dst.ap();
  const int64_t bank = geometry_.psumBankBytes();
  const isa::Footprint box = isa::footprintOf(out);
  if (box.byteBegin / bank != (box.byteEnd - 1) / bank)
    throw Error(fmt::format("{}: matmul output '{}' crosses a {}-byte PSUM bank", kernel_,
                            dst.name(), bank));
  isa::Instruction inst = makeInstruction(isa::Opcode::NcMatmul, isa::Engine::Tensor, out,
                                          {stationary.ap(), moving.ap()});
  inst.accumulate = accumulate;
  emit(std::move(inst));
}

void KernelBuilder::transpose(const Tile& dst, const Tile& src, isa::Engine engine) {
  emit(makeInstruction(isa::Opcode::NcTranspose, engine, dst.ap(), {src.ap()}));
}

void KernelBuilder::activation(const Tile& dst, const Tile& src, isa::ActFn fn, ScalarArg scale,
                               const std::optional<Tile>& bias,
                               const std::optional<Tile>& reduceDst) {
  isa::Instruction inst =
      makeInstruction(isa::Opcode::Activation, isa::Engine::Scalar, dst.ap(), {src.ap()});
  inst.act = fn;
  applyScalar(scale, inst.scale);
  if (bias) inst.bias = bias->ap();
  if (reduceDst) inst.reduceDst = reduceDst->ap();
  emit(std::move(inst));
}

void KernelBuilder::tensorTensor(const Tile& dst, const Tile& a, const Tile& b, isa::AluOp op,
                                 isa::Engine engine) {
  isa::Instruction inst =
      makeInstruction(isa::Opcode::TensorTensor, engine, dst.ap(), {a.ap(), b.ap()});
  inst.op0 = op;
  emit(std::move(inst));
}

void KernelBuilder::tensorScalar(const Tile& dst, const Tile& src, isa::AluOp op0,
                                 ScalarArg operand0, isa::AluOp op1, ScalarArg operand1,
                                 isa::Engine engine, bool reverse0, bool reverse1) {
  isa::Instruction inst = makeInstruction(isa::Opcode::TensorScalar, engine, dst.ap(), {src.ap()});
  inst.op0 = op0;
  inst.op1 = op1;
  applyScalar(operand0, inst.operand0);
  applyScalar(operand1, inst.operand1);
  inst.reverse0 = reverse0;
  inst.reverse1 = reverse1;
  emit(std::move(inst));
}

void KernelBuilder::scalarTensorTensor(const Tile& dst, const Tile& data, isa::AluOp op0,
                                       ScalarArg operand0, isa::AluOp op1, const Tile& tensor,
                                       isa::Engine engine) {
  isa::Instruction inst =
      makeInstruction(isa::Opcode::ScalarTensorTensor, engine, dst.ap(), {data.ap(), tensor.ap()});
  inst.op0 = op0;
  inst.op1 = op1;
  applyScalar(operand0, inst.operand0);
  emit(std::move(inst));
}

void KernelBuilder::tensorReduce(const Tile& dst, const Tile& src, isa::AluOp op, int32_t axes,
                                 bool negate, isa::Engine engine) {
  isa::Instruction inst = makeInstruction(isa::Opcode::TensorReduce, engine, dst.ap(), {src.ap()});
  inst.op0 = op;
  inst.reduceAxes = axes;
  inst.negate = negate;
  emit(std::move(inst));
}

void KernelBuilder::tensorCopy(const Tile& dst, const Tile& src, isa::Engine engine) {
  emit(makeInstruction(isa::Opcode::TensorCopy, engine, dst.ap(), {src.ap()}));
}

void KernelBuilder::copyPredicated(const Tile& dst, const Tile& predicate, const Tile& src,
                                   isa::Engine engine) {
  emit(makeInstruction(isa::Opcode::CopyPredicated, engine, dst.ap(), {predicate.ap(), src.ap()}));
}

void KernelBuilder::memset(const Tile& dst, float value, isa::Engine engine) {
  isa::Instruction inst = makeInstruction(isa::Opcode::Memset, engine, dst.ap(), {});
  inst.value = value;
  emit(std::move(inst));
}

void KernelBuilder::iota(const Tile& dst, const isa::Affine& affine, isa::Engine engine) {
  isa::Instruction inst = makeInstruction(isa::Opcode::Iota, engine, dst.ap(), {});
  inst.affine = affine;
  emit(std::move(inst));
}

void KernelBuilder::affineSelect(const Tile& dst, const Tile& src, const isa::Affine& affine,
                                 isa::AluOp cmp, float fill, isa::Engine engine) {
  isa::Instruction inst = makeInstruction(isa::Opcode::AffineSelect, engine, dst.ap(), {src.ap()});
  inst.affine = affine;
  inst.cmp = cmp;
  inst.value = fill;
  emit(std::move(inst));
}

void KernelBuilder::emit(isa::Instruction inst) {
  if (finished_) throw Error(fmt::format("{}: instruction emitted after finish()", kernel_));
  if (isa::isDma(inst.opcode)) {
    if (inst.dmaQueue < 0) inst.dmaQueue = nextDmaQueue(inst.engine);
    if (inst.dmaQueue >= geometry_.dmaQueues)
      throw Error(fmt::format("{}: DMA queue {} is not 0..{} (the machine's dma_queues)", kernel_,
                              inst.dmaQueue, geometry_.dmaQueues - 1));
    int& owner = queueOwner_[inst.dmaQueue];
    if (owner >= 0 && owner != static_cast<int>(inst.engine))
      throw Error(fmt::format(
          "{}: DMA queue {} is fed by {}, not {} (a queue takes DMAs from one engine only)",
          kernel_, inst.dmaQueue, isa::engineName(static_cast<isa::Engine>(owner)),
          isa::engineName(inst.engine)));
    owner = static_cast<int>(inst.engine);
  } else {
    inst.dmaQueue = -1;
  }
  auto region = [&](const isa::AccessPattern& ap) {
    const bool hbm = ap.space == isa::Space::Hbm && ap.tensor >= 0 &&
                     ap.tensor < static_cast<int32_t>(program_.tensors.size());
    const auto& shape = hbm ? program_.tensors[ap.tensor].shape : std::vector<int64_t>{};
    return regionOf(ap, shape.empty() ? 0 : shape.back());
  };
  const int64_t index = static_cast<int64_t>(program_.instructions.size());
  std::vector<size_t> touched;  // allocations this instruction reads or writes
  auto checkLive = [&](const isa::AccessPattern& ap, int slot) {
    if (ap.space == isa::Space::Hbm) return;
    const isa::Footprint box = isa::footprintOf(ap);
    const TileAllocator& alloc = ap.space == isa::Space::Psum ? *psumAlloc_ : *sbufAlloc_;
    const int64_t owner = alloc.ownerOf(box.byteBegin, box.byteEnd);
    if (owner >= 0) {
      auto record = liveRecords(ap.space).find(owner);
      if (record != liveRecords(ap.space).end()) touched.push_back(record->second);
      return;
    }
    throw Error(
        fmt::format("{}: instruction {} ({}) {} touches {} bytes [{}, {}) outside every live tile "
                    "(used after release?)",
                    kernel_, index, isa::opcodeName(inst.opcode), isa::operandName(inst, slot),
                    isa::spaceName(ap.space), box.byteBegin, box.byteEnd));
  };
  std::vector<Region> reads, writes;
  isa::forEachOperand(inst, [&](const isa::AccessPattern& ap, int slot, bool write) {
    checkLive(ap, slot);
    (write ? writes : reads).push_back(region(ap));
  });
  tracker_->add(inst, reads, writes);
  if (!autoSync_) inst.waits.clear();
  for (size_t id : touched) {
    std::vector<int64_t>& list = allocations_[id].instructions;
    if (list.empty() || list.back() != index) list.push_back(index);
  }
  if (!note_.empty()) inst.note = note_;
  program_.instructions.push_back(std::move(inst));
}

isa::Program KernelBuilder::finish() {
  if (finished_) throw Error(fmt::format("{}: finish() called twice", kernel_));
  finished_ = true;
  isa::validateProgram(program_, geometry_);
  return std::move(program_);
}

}  // namespace neuronsim::kernels
