#pragma once
// Automatic semaphores: per-address last writer and readers, and what each stream already knows.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "isa/geometry.h"
#include "isa/instruction.h"
#include "isa/program.h"
#include "kernels/builder/byte_pattern.h"
#include "kernels/builder/inline_vector.h"

namespace neuronsim::kernels {

/// Streams that own a semaphore: the five engines, then DMA queues q0.. (at most
/// isa::kMaxDmaQueues). The semaphore index equals the stream index.
inline constexpr int kNumStreams = isa::kNumEngines + isa::kMaxDmaQueues;
/// Semaphore names in index order: tensor, vector, scalar, gpsimd, sync, q0 .. q<queues-1>.
std::vector<std::string> streamSemaphoreNames(int32_t queues);
int streamOfEngine(isa::Engine engine);
int streamOfQueue(int32_t queue);

/// A rectangle of memory: [lo, hi) along the axis the tracker's maps are keyed by and [p0, p1)
/// along the axis kept as layers inside each map segment. On chip the key is the byte within a
/// partition and the layers are partitions. In HBM the key is the row (of the tensor's last
/// axis) and the layers are elements within the row: a program touches ever more rows, so rows
/// must be the searchable key, while a row is short. On chip, `pattern` says which bytes of
/// [lo, hi) the access touches (null: all of them).
struct Box {
  int64_t p0 = 0, p1 = 1;
  int64_t lo = 0, hi = 0;
  std::shared_ptr<const BytePattern> pattern;
};

/// The memory an operand touches: its space (and HBM tensor) and disjoint boxes.
struct Region {
  isa::Space space = isa::Space::Sbuf;
  int32_t tensor = -1;
  std::vector<Box> boxes;
};

/// The region an access pattern covers. On chip: one box (its partitions by the byte
/// bounding box, with the exact byte pattern when it leaves gaps). HBM: the exact element runs
/// (coarsened to bounding boxes beyond a few thousand runs) cut into rows of `rowLength` elements
/// and merged into rectangles (without a row length: element runs keyed by element).
Region regionOf(const isa::AccessPattern& ap, int64_t rowLength = 0);

/// Tracks, per memory address, the last writer and the readers since, as (stream, count)
/// pairs, in interval maps (one per on-chip space and per HBM tensor). Knowledge vectors
/// (how many instructions of each stream are known complete) make waits minimal:
/// a wait is emitted only when the issuing stream cannot already know it is met.
/// Contract: DMA queues complete their transfers in order (FIFO).
class DependencyTracker {
 public:
  using Knowledge = std::array<int64_t, kNumStreams>;

  DependencyTracker();
  /// Computes the waits for `inst` from `reads` and `writes`, records the accesses and sets
  /// `inst.waits` and `inst.signals` (its own stream's semaphore at completion).
  void add(isa::Instruction& inst, const std::vector<Region>& reads,
           const std::vector<Region>& writes);
  /// Instructions that signalled `stream` so far.
  int64_t count(int stream) const { return count_[stream]; }

 private:
  struct Access {
    int16_t stream = -1;
    bool write = false;
    int64_t count = 0;
  };
  /// Partitions [p0, p1) x the segment's bytes in `pattern` (null: all), with the accesses
  /// that may have touched them: the writer since the last covering write, and in `others` the
  /// readers since (at most one per stream, the latest) and, once layers were merged, further
  /// writers (`write` set).
  struct Layer {
    int64_t p0 = 0, p1 = 0;
    const BytePattern* pattern = nullptr;  ///< interned in patterns_
    Access writer;
    InlineVector<Access, 2> others;
  };
  struct Segment {
    int64_t hi = 0;
    std::vector<Layer> layers;
  };
  using SegmentMap = std::map<int64_t, Segment>;

  SegmentMap& mapFor(const Region& region);
  /// The one stored copy of `pattern` (null stays null).
  const BytePattern* intern(const std::shared_ptr<const BytePattern>& pattern);
  void gather(const Region& region, bool write, std::array<int64_t, kNumStreams>& need);
  void recordRead(SegmentMap& map, const Box& box, const BytePattern* pattern, Access self);
  void recordWrite(SegmentMap& map, const Box& box, const BytePattern* pattern, Access self);
  /// Splits segments so that `at` is a boundary.
  void splitAt(SegmentMap& map, int64_t at);
  /// Merges the oldest layers of a segment holding more than kMaxLayers (a safe superset).
  static void capLayers(std::vector<Layer>& layers);

  std::array<int64_t, kNumStreams> count_{};
  std::array<std::vector<Knowledge>, kNumStreams> completed_;  ///< [stream][count-1]
  std::array<Knowledge, isa::kNumEngines> engineState_{};
  SegmentMap sbuf_, psum_;
  std::unordered_set<BytePattern, BytePatternHash> patterns_;
  std::vector<SegmentMap> hbm_;
};

}  // namespace neuronsim::kernels
