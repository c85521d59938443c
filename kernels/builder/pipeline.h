#pragma once
// Software-pipelining idioms shared by library kernels: buffer rings, rotating buffer sets,
// DMA queue spreading and engine alternation (PSUM evictions).

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "isa/instruction.h"
#include "kernels/builder/kernel_builder.h"

namespace neuronsim::kernels {

/// Round robin over a fixed list of DMA queues (ids 0..15).
class QueueCycle {
 public:
  explicit QueueCycle(std::vector<int32_t> queues) : queues_(std::move(queues)) {}
  /// `count` consecutive queues starting at `first` (at least one).
  static QueueCycle span(int32_t first, int32_t count);
  int32_t next() { return queues_[next_++ % queues_.size()]; }
  /// A callable handing out next() (for helpers that take a queue source).
  std::function<int32_t()> taker() {
    return [this] { return next(); };
  }

 private:
  std::vector<int32_t> queues_;
  size_t next_ = 0;
};

/// Round robin over compute engines, e.g. {Vector, Scalar} for PSUM evictions.
class EngineCycle {
 public:
  explicit EngineCycle(std::vector<isa::Engine> engines) : engines_(std::move(engines)) {}
  isa::Engine next() { return engines_[next_++ % engines_.size()]; }

 private:
  std::vector<isa::Engine> engines_;
  size_t next_ = 0;
};

/// dst = src on `engine`: tensor_copy on VectorE/GpSimd, an activation Copy on ScalarE.
void copyOn(KernelBuilder& builder, const Tile& dst, const Tile& src, isa::Engine engine);

/// Evicts PSUM results alternating VectorE and ScalarE (each PSUM bank on the next engine), so
/// consecutive evictions run in parallel while TensorE fills the next bank. Evictions from the
/// bank of the one before stay on its engine: two engines on one bank run in turn (A2).
class PsumEvictor {
 public:
  explicit PsumEvictor(KernelBuilder& builder,
                       std::vector<isa::Engine> engines = {isa::Engine::Vector,
                                                           isa::Engine::Scalar})
      : builder_(builder), engines_(std::move(engines)) {}
  /// dst = src (a PSUM tile) on the next engine; returns the engine used.
  isa::Engine operator()(const Tile& dst, const Tile& src);

 private:
  KernelBuilder& builder_;
  EngineCycle engines_;
  uint64_t lastBanks_ = 0;  ///< PSUM banks (bit per bank) of the last eviction
  isa::Engine last_ = isa::Engine::Vector;
};

/// `count` same-shaped tiles used in turn: tile i is reused by item i + count, so up to
/// `count` items' tiles are live at once (the builder orders each reuse after the last access).
class BufferRing {
 public:
  BufferRing() = default;
  /// `count` SBUF tiles of `shape` named NAME_0.. (count >= 1).
  static BufferRing sbuf(KernelBuilder& builder, int count, const std::vector<int64_t>& shape,
                         isa::Dtype dtype, const std::string& name);
  /// The same in PSUM.
  static BufferRing psum(KernelBuilder& builder, int count, const std::vector<int64_t>& shape,
                         isa::Dtype dtype, const std::string& name);
  /// The tile of item `item` (item % size()).
  const Tile& operator[](int64_t item) const {
    return tiles_[static_cast<size_t>(item) % tiles_.size()];
  }
  /// The tile of the next item in use order (a cursor of its own, independent of operator[]).
  const Tile& next() { return (*this)[used_++]; }
  /// Advances the next() cursor and returns the item it stood at, for rings used in lockstep
  /// (ring[item], other[item]).
  int64_t advance() { return used_++; }
  int size() const { return static_cast<int>(tiles_.size()); }
  /// Returns every tile to the builder (the ring is empty afterwards).
  void release(KernelBuilder& builder);

 private:
  /// `count` tiles made by `allocate(NAME_i)`.
  static BufferRing fill(int count, const std::string& name,
                         const std::function<Tile(const std::string&)>& allocate);
  std::vector<Tile> tiles_;
  int64_t used_ = 0;
};

/// runPipelined that can stop between items and resume: a kernel emits items on demand, so
/// another program's instructions can be interleaved between them.
class Pipeline {
 public:
  using Step = std::function<void(int64_t item, int set)>;
  /// `count` items over `sets` buffer sets (as runPipelined).
  Pipeline(int64_t count, int sets, Step load, Step compute);
  /// Emits the loads of the first sets - 1 items (once; emitThrough calls it first).
  void prime();
  /// Emits items up to (not including) `end`, each after the loads sets - 1 items ahead.
  void emitThrough(int64_t end);
  int64_t count() const { return count_; }
  /// The next item to emit.
  int64_t next() const { return next_; }

 private:
  int setOf(int64_t item) const { return static_cast<int>(item % sets_); }
  int64_t count_;
  int sets_;
  Step load_, compute_;
  int64_t next_ = 0;
  bool primed_ = false;
};

/// Runs `count` work items over `sets` rotating buffer sets (set = item % sets): the loads of
/// item i + sets - 1 are emitted before compute(i), so up to sets - 1 items' loads overlap item
/// i's compute (the builder's semaphores make a set's loads wait until its previous item is
/// done). sets = 1 runs load(i), compute(i) in turn.
void runPipelined(int64_t count, int sets, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& compute);

}  // namespace neuronsim::kernels
