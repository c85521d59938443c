#pragma once
// Happens-before race detection: vector clocks carried by semaphore signals, and a shadow
// memory of coarse buckets that remembers each agent's last readers and writers.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "isa/huge_page_allocator.h"
#include "isa/program.h"
#include "sim/core/operand_list.h"
#include "sim/machine_config.h"
#include "sim/race/footprint.h"
#include "sim/race/vector_clock.h"
#include "traces/tick.h"

namespace neuronsim::sim {

/// Contract: an instruction's accesses are recorded when it issues, after it acquired its
/// waits; its `@read` signals release the clock from before the instruction (nothing of it
/// has finished when it starts reading), its `@complete` signals the clock after it. An
/// access is checked against earlier accesses of other agents that touch the same bucket (a
/// 1 KiB block of every partition on chip, 16 KiB of an HBM tensor) and are not ordered before
/// it; a candidate is confirmed by exact byte overlap. Each agent keeps its last kSlots readers
/// and writers per bucket (a newer access replaces one it covers, else the oldest), so a race
/// hidden behind more than kSlots newer accesses of the same agent to other parts of the
/// bucket can be missed (never a false report).
class RaceDetector {
 public:
  /// `signalsPerSemaphore` sizes each semaphore's history (the program's signals of it).
  RaceDetector(const isa::Program& program, const MachineConfig& machine,
               const std::vector<int64_t>& signalsPerSemaphore);

  VectorClock& clock(int agent) { return clocks_[static_cast<size_t>(agent)]; }
  /// Begins a new instruction on `agent` (its epoch increases).
  void tick(int agent) { ++clocks_[static_cast<size_t>(agent)][static_cast<size_t>(agent)]; }
  /// `agent` passed a wait for `sem` >= value: joins the clocks of the earliest increments
  /// (in visibility order) that got it there.
  void acquire(int agent, int32_t sem, int64_t value);
  /// An increment of `delta` on `sem` visible at `at`, carrying the signaller's clock `vc`.
  void release(int32_t sem, traces::Tick at, int64_t delta, const VectorClock& vc);
  /// Checks and records every operand of instruction `index`, run by `agent` now.
  void access(int agent, int64_t index, std::span<const Operand> operands);
  /// One line per race found (at most kMaxReports, then a count line).
  std::vector<std::string> reports() const;

 private:
  /// A bucket's memory of one operand access.
  struct Entry {
    Footprint box;
    int64_t index;   ///< the instruction
    uint32_t epoch;  ///< its agent's epoch
    uint32_t age;    ///< larger is newer
    int8_t agent;
    int8_t slot;  ///< operand slot (see isa::forEachOperand)
    bool write;
  };
  static constexpr int kSlots = 4;
  /// Shadow of one memory block: each agent's last kSlots writers and readers.
  using Bucket = std::vector<Entry>;
  /// One increment of a semaphore: the value after it and the join of the clocks of every
  /// increment up to it (in visibility order).
  struct SignalRecord {
    traces::Tick at;
    int64_t value;
    VectorClock cumulative;
  };
  /// A semaphore's increments in visibility order.
  struct SemaphoreHistory {
    isa::LargeVector<SignalRecord> signals;
    bool monotone = true;
  };

  void accessOperand(int agent, int64_t index, const Operand& op);
  std::vector<Bucket>* bucketsFor(const Footprint& f, int64_t& blockBytes);
  /// Visits only the buckets of [b0, b1] an HBM pattern's rows reach (the axes whose step spans
  /// a bucket are walked, the others give each row's byte reach); false, having visited
  /// nothing, when that would not visit fewer buckets than the whole range.
  bool visitRows(std::vector<Bucket>& buckets, const isa::AccessPattern& ap, const Entry& current,
                 int64_t b0, int64_t b1);
  /// Checks `current` against the bucket's entries of other agents, then remembers it there.
  void visit(Bucket& bucket, const Entry& current);
  void check(const Entry& prior, const Entry& current);
  std::string describe(const Entry& e) const;

  static constexpr size_t kMaxReports = 100;
  const isa::Program& program_;
  std::array<VectorClock, kNumAgents> clocks_{};
  std::vector<SemaphoreHistory> semaphores_;
  uint32_t age_ = 0;
  std::vector<Bucket> sbuf_, psum_;
  std::vector<std::vector<Bucket>> hbm_;
  std::vector<uint64_t> checked_;  ///< (instruction, slot) already checked for this operand
  std::unordered_set<uint64_t> reportedPairs_;
  std::vector<std::string> reports_;
  int64_t unreported_ = 0;
};

}  // namespace neuronsim::sim
