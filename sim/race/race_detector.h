#pragma once
// Happens-before race detection: vector clocks carried by semaphore signals, and a shadow
// memory of coarse buckets that remembers each agent's last reader and writer.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "isa/program.h"
#include "sim/machine_config.h"
#include "sim/race/footprint.h"
#include "sim/race/vector_clock.h"

namespace neuronsim::sim {

/// Contract: an instruction's accesses are recorded when it issues, after it acquired its
/// waits and before its signals are released. An access is checked against earlier
/// accesses of other agents that touch the same bucket and are not ordered before it;
/// a candidate is confirmed by exact byte overlap. Each agent keeps its last kSlots readers
/// and writers per bucket (a newer access replaces one it covers, else the oldest), so a race
/// hidden behind more than kSlots newer accesses of the same agent to other parts of the
/// bucket can be missed (never a false report).
class RaceDetector {
 public:
  RaceDetector(const isa::Program& program, const MachineConfig& machine);

  VectorClock& clock(int agent) { return clocks_[agent]; }
  /// Begins a new instruction on `agent` (its epoch increases).
  void tick(int agent) { ++clocks_[agent][agent]; }
  /// `agent` passed a wait for `sem` >= value: joins the clocks of the earliest increments
  /// (in landing time) that got it there.
  void acquire(int agent, int32_t sem, int64_t value);
  /// An increment of `delta` on `sem` lands at `ns`, carrying the signaller's clock `vc`.
  void release(int32_t sem, double ns, int64_t delta, const VectorClock& vc);
  /// Checks and records every operand of instruction `index`, run by `agent` now.
  void access(int agent, int64_t index);
  /// One line per race found (at most kMaxReports, then a count line).
  std::vector<std::string> reports() const;

 private:
  /// One recorded operand access.
  struct Record {
    int64_t index;
    uint32_t epoch;
    int8_t agent;
    int8_t slot;  ///< operand slot (see operandAt)
    bool write;
    Footprint box;
  };
  static constexpr int kSlots = 4;
  using Slots = std::array<int32_t, kSlots>;
  /// Shadow of one memory block: each agent's last writers and readers (record ids, -1 none).
  struct Bucket {
    std::array<Slots, kNumAgents> writes;
    std::array<Slots, kNumAgents> reads;
  };
  /// One increment of a semaphore with the clock it carried.
  struct SignalRecord {
    double ns;
    int64_t delta;
    int64_t value;  ///< cumulative, in landing-time order
    VectorClock vc;
    VectorClock cumulative;
  };
  /// A semaphore's increments in landing-time order.
  struct SemaphoreHistory {
    std::vector<SignalRecord> signals;
    bool monotone = true;
  };

  void accessOperand(int agent, int64_t index, int slot, const isa::AccessPattern& ap, bool write);
  std::vector<Bucket>* bucketsFor(const Footprint& f, int64_t& blockBytes, int64_t& blocksPerRow);
  void check(int32_t candidate, const Record& current, const isa::AccessPattern& ap);
  void remember(Slots& slots, int32_t id);
  static Bucket emptyBucket();
  std::string describe(const Record& r) const;

  static constexpr size_t kMaxReports = 100;
  const isa::Program& program_;
  std::array<VectorClock, kNumAgents> clocks_{};
  std::vector<SemaphoreHistory> semaphores_;
  std::vector<Record> records_;
  std::vector<Bucket> sbuf_, psum_;
  std::vector<std::vector<Bucket>> hbm_;
  int64_t sbufBlocks_, psumBlocks_;
  std::vector<int32_t> checked_;
  std::unordered_set<uint64_t> reportedPairs_;
  std::vector<std::string> reports_;
  int64_t unreported_ = 0;
};

/// Operand `slot` of an instruction: 0 dst, 1..srcs, then bias, reduceDst, operand0.vec,
/// operand1.vec, scale.vec; null when absent.
const isa::AccessPattern* operandAt(const isa::Instruction& inst, int slot);

}  // namespace neuronsim::sim
