#pragma once
// The kernel "compiler": HBM tensors, tile allocation, one method per ISA op, and automatic
// semaphores from each instruction's read and write ranges.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "isa/geometry.h"
#include "isa/instruction.h"
#include "isa/program.h"
#include "kernels/builder/allocation_record.h"
#include "kernels/builder/views.h"

namespace neuronsim::kernels {

class DependencyTracker;
class TileAllocator;

/// Where a DMA is triggered from and which queue carries it.
struct DmaOptions {
  int32_t queue = -1;                     ///< 0..15, or -1: next queue of the round robin
  isa::Engine issue = isa::Engine::Sync;  ///< the stream that triggers it (Sync or an engine)
};

/// Records a kernel as sequential code and produces a Program with one stream per engine
/// and DMA queue. Contract: kernel code never writes semaphores. Every instruction signals its
/// own engine's semaphore (a DMA: its queue's, `q0`..`q15`) at completion; waits are added
/// for every RAW, WAR and WAW overlap on another stream (and on the same DMA queue), keeping
/// only the strongest wait per semaphore and dropping waits the stream already knows are met
/// (same-engine order, earlier waits, and what those waits imply transitively).
class KernelBuilder {
 public:
  /// `kernel` names the kernel in errors; `geometry` gives SBUF/PSUM capacity.
  KernelBuilder(std::string kernel, const isa::Geometry& geometry);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  const std::string& kernelName() const { return kernel_; }
  const isa::Geometry& geometry() const { return geometry_; }

  // ---- HBM tensors --------------------------------------------------------------------
  /// Declares a kernel input (contiguous, row-major) and returns a view of all of it.
  HbmView input(const std::string& name, const std::vector<int64_t>& shape, isa::Dtype dtype);
  /// Declares a kernel output.
  HbmView output(const std::string& name, const std::vector<int64_t>& shape, isa::Dtype dtype);
  /// Declares an HBM scratch tensor (neither input nor output).
  HbmView internal(const std::string& name, const std::vector<int64_t>& shape, isa::Dtype dtype);

  // ---- on-chip tiles --------------------------------------------------------------------
  /// Allocates an SBUF tile of shape [partitions, free...] at partitions [0, shape[0]).
  /// Throws neuronsim::Error naming the kernel, the tile and the bytes asked and available.
  Tile sbuf(const std::vector<int64_t>& shape, isa::Dtype dtype, const std::string& name = "");
  /// Allocates a PSUM tile; one of at most 2 KiB per partition sits inside one bank, a larger
  /// one starts at a bank boundary.
  Tile psum(const std::vector<int64_t>& shape, isa::Dtype dtype = isa::Dtype::Fp32,
            const std::string& name = "");
  /// Frees the allocation `tile` was carved from (any view of it). Later tiles may reuse the
  /// bytes; the builder orders their accesses after this tile's (WAR/WAW).
  void release(const Tile& tile);
  /// Bytes per partition currently allocated in SBUF / PSUM.
  int64_t sbufBytesInUse() const;
  int64_t psumBytesInUse() const;
  /// Bytes per partition still free (largest possible new allocation may be smaller).
  int64_t sbufBytesFree() const;
  /// Every SBUF/PSUM allocation so far, in allocation order, with the instructions that touch
  /// it (for occupancy counters); still valid after finish().
  const std::vector<AllocationRecord>& allocations() const { return allocations_; }

  // ---- DMA ----------------------------------------------------------------------------
  /// dst = src (any two spaces; element counts equal; dtype converted).
  void dmaCopy(const DmaOperand& dst, const DmaOperand& src, DmaOptions options = {});
  /// dst [B parts, A free] = src [A, B]^T; 2- or 4-byte dtypes.
  void dmaTranspose(const DmaOperand& dst, const DmaOperand& src, DmaOptions options = {});
  /// Sets the queues `issue`'s round robin cycles through. Defaults: Sync q0..q11, Scalar
  /// q12..q13, GpSimd q14..q15. Contract: a queue takes DMAs from one issuing engine only (the
  /// first that used it), because its semaphore counts transfers in trigger order, which is
  /// builder order only within one engine's stream; a DMA on a queue another engine feeds
  /// throws neuronsim::Error.
  void setDmaQueues(const std::vector<int32_t>& queues, isa::Engine issue = isa::Engine::Sync);
  /// The queue the next round-robin DMA triggered by `issue` will use (skipping queues other
  /// engines feed), and advances that round robin.
  int32_t nextDmaQueue(isa::Engine issue = isa::Engine::Sync);

  // ---- compute --------------------------------------------------------------------------
  /// dst (PSUM [M, N] fp32) (+)= stationary[K, M]^T @ moving[K, N] on TensorE.
  void matmul(const Tile& dst, const Tile& stationary, const Tile& moving, bool accumulate);
  /// dst [F, P] = src [P, F]^T on Tensor (dst in PSUM) or Vector (P, F <= 32).
  void transpose(const Tile& dst, const Tile& src, isa::Engine engine = isa::Engine::Tensor);
  /// dst = fn(src * scale + bias) on ScalarE; `reduceDst` [P,1] receives the row sums of dst.
  void activation(const Tile& dst, const Tile& src, isa::ActFn fn, ScalarArg scale = 1.0f,
                  const std::optional<Tile>& bias = std::nullopt,
                  const std::optional<Tile>& reduceDst = std::nullopt);
  /// dst = a op b.
  void tensorTensor(const Tile& dst, const Tile& a, const Tile& b, isa::AluOp op,
                    isa::Engine engine = isa::Engine::Vector);
  /// dst = (src op0 operand0) op1 operand1 (reverseN swaps the operands of opN).
  void tensorScalar(const Tile& dst, const Tile& src, isa::AluOp op0, ScalarArg operand0,
                    isa::AluOp op1 = isa::AluOp::Bypass, ScalarArg operand1 = 0.0f,
                    isa::Engine engine = isa::Engine::Vector, bool reverse0 = false,
                    bool reverse1 = false);
  /// dst = (data op0 operand0) op1 tensor.
  void scalarTensorTensor(const Tile& dst, const Tile& data, isa::AluOp op0, ScalarArg operand0,
                          isa::AluOp op1, const Tile& tensor,
                          isa::Engine engine = isa::Engine::Vector);
  /// dst = reduce(op) of src over its last `axes` free axes (negated when `negate`).
  void tensorReduce(const Tile& dst, const Tile& src, isa::AluOp op, int32_t axes = 1,
                    bool negate = false, isa::Engine engine = isa::Engine::Vector);
  /// dst = src converted to dst's dtype.
  void tensorCopy(const Tile& dst, const Tile& src, isa::Engine engine = isa::Engine::Vector);
  /// dst = src where predicate != 0, else dst unchanged.
  void copyPredicated(const Tile& dst, const Tile& predicate, const Tile& src,
                      isa::Engine engine = isa::Engine::Vector);
  /// dst = value.
  void memset(const Tile& dst, float value, isa::Engine engine = isa::Engine::Vector);
  /// dst = affine(p, i); affine.pattern's nums must equal dst's free shape.
  void iota(const Tile& dst, const isa::Affine& affine, isa::Engine engine = isa::Engine::GpSimd);
  /// dst = (affine(p, i) cmp 0) ? src : fill.
  void affineSelect(const Tile& dst, const Tile& src, const isa::Affine& affine, isa::AluOp cmp,
                    float fill, isa::Engine engine = isa::Engine::GpSimd);

  /// Emits a fully formed instruction (its waits and signals are replaced by the builder's).
  void emit(isa::Instruction inst);
  /// The kernel phase the following instructions belong to, until the next call ("" clears):
  /// printed as an assembly comment and recorded in traces, where report and viewer group time by
  /// it.
  void setNote(std::string note) { note_ = std::move(note); }
  /// Off: the following instructions get no waits (their accesses are still recorded for later
  /// ones); a what-if for tuning whose hazards the simulator's race detector reports.
  void setAutoSync(bool on) { autoSync_ = on; }
  /// The program so far (instructions in builder order).
  const isa::Program& program() const { return program_; }

  int64_t instructionCount() const { return static_cast<int64_t>(program_.instructions.size()); }

  /// Ends the kernel: validates (isa::validateProgram) and returns the program. The builder
  /// must not be used afterwards.
  isa::Program finish();

 private:
  HbmView declare(const std::string& name, const std::vector<int64_t>& shape, isa::Dtype dtype,
                  isa::TensorKind kind);
  Tile allocate(isa::Space space, const std::vector<int64_t>& shape, isa::Dtype dtype,
                const std::string& name);
  void emitDma(isa::Opcode opcode, const DmaOperand& dst, const DmaOperand& src,
               DmaOptions options);
  std::unordered_map<int64_t, size_t>& liveRecords(isa::Space space) {
    return space == isa::Space::Psum ? livePsumRecords_ : liveSbufRecords_;
  }

  std::string kernel_;
  isa::Geometry geometry_;
  isa::Program program_;
  std::unique_ptr<DependencyTracker> tracker_;
  std::unique_ptr<TileAllocator> sbufAlloc_;
  std::unique_ptr<TileAllocator> psumAlloc_;
  std::vector<std::vector<int32_t>> dmaQueues_;  ///< per issuing engine
  std::vector<size_t> nextQueue_;                ///< per issuing engine
  std::vector<int> queueOwner_;                  ///< engine feeding each queue, or -1
  std::vector<AllocationRecord> allocations_;
  std::unordered_map<int64_t, size_t> liveSbufRecords_,
      livePsumRecords_;  ///< live offset -> allocations_ index
  isa::Note note_;
  bool autoSync_ = true;
  int tileCounter_ = 0;
  bool finished_ = false;
};

}  // namespace neuronsim::kernels
