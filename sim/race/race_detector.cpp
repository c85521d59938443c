// Vector-clock race detection over a bucketed shadow memory.
#include "sim/race/race_detector.h"

#include <algorithm>
#include <string>

#include "sim/core/text.h"

namespace neuronsim::sim {
namespace {

constexpr int64_t kOnChipBlockBytes = 1024;
constexpr int64_t kHbmBlockBytes = 16384;
constexpr int32_t kPartitionsPerGroup = 32;

std::string operandName(const isa::Instruction& inst, int slot) {
  if (slot == 0) return "dst";
  const int nsrc = static_cast<int>(inst.srcs.size());
  if (slot <= nsrc) return concat("srcs[", std::to_string(slot - 1), "]");
  switch (slot - nsrc) {
    case 1:
      return "bias";
    case 2:
      return "reduce_dst";
    case 3:
      return "operand0";
    case 4:
      return "operand1";
    default:
      return "scale";
  }
}

std::string rangeText(const isa::Program& program, const isa::AccessPattern& ap) {
  const Footprint f = footprintOf(ap);
  std::string where(isa::spaceName(ap.space));
  if (ap.space == isa::Space::Hbm) {
    const bool known = ap.tensor >= 0 && ap.tensor < static_cast<int32_t>(program.tensors.size());
    where += concat(
        " ", known ? program.tensors[ap.tensor].name : concat("#", std::to_string(ap.tensor)));
  } else {
    where += concat(" p", std::to_string(f.partBegin), "-", std::to_string(f.partEnd - 1));
  }
  return concat(where, " bytes ", std::to_string(f.byteBegin), "-", std::to_string(f.byteEnd - 1));
}

}  // namespace

RaceDetector::RaceDetector(const isa::Program& program, const MachineConfig& machine)
    : program_(program), semaphores_(program.semaphores.size()) {
  const int64_t groups =
      (machine.geometry.partitions + kPartitionsPerGroup - 1) / kPartitionsPerGroup;
  sbufBlocks_ = (machine.geometry.sbufPartitionBytes + kOnChipBlockBytes - 1) / kOnChipBlockBytes;
  psumBlocks_ = (machine.geometry.psumPartitionBytes + kOnChipBlockBytes - 1) / kOnChipBlockBytes;
  sbuf_.resize(static_cast<size_t>(groups * sbufBlocks_));
  psum_.resize(static_cast<size_t>(groups * psumBlocks_));
  hbm_.resize(program.tensors.size());
}

void RaceDetector::acquire(int agent, int32_t sem, int64_t value) {
  if (sem < 0 || sem >= static_cast<int32_t>(semaphores_.size())) return;
  const SemaphoreHistory& h = semaphores_[sem];
  if (h.signals.empty()) return;
  const SignalRecord* pick = &h.signals.back();
  if (h.monotone) {
    auto it = std::lower_bound(h.signals.begin(), h.signals.end(), value,
                               [](const SignalRecord& r, int64_t v) { return r.value < v; });
    if (it != h.signals.end()) pick = &*it;
  }
  joinInto(clocks_[agent], pick->cumulative);
}

void RaceDetector::release(int32_t sem, traces::Tick at, int64_t delta, const VectorClock& vc) {
  if (sem < 0 || sem >= static_cast<int32_t>(semaphores_.size())) return;
  SemaphoreHistory& h = semaphores_[static_cast<size_t>(sem)];
  if (delta <= 0) h.monotone = false;
  auto pos = std::upper_bound(h.signals.begin(), h.signals.end(), at,
                              [](traces::Tick t, const SignalRecord& r) { return t < r.at; });
  SignalRecord added{at, delta, vc};
  if (pos != h.signals.begin()) {
    added.value += std::prev(pos)->value;
    joinInto(added.cumulative, std::prev(pos)->cumulative);
  }
  pos = h.signals.insert(pos, added);
  // Later increments (registered earlier, visible later) now also follow this one.
  for (auto it = std::next(pos); it != h.signals.end(); ++it) {
    it->value += delta;
    joinInto(it->cumulative, vc);
  }
}

void RaceDetector::access(int agent, int64_t index, const OperandList& operands) {
  for (const Operand& op : operands) accessOperand(agent, index, op);
}

std::vector<RaceDetector::Bucket>* RaceDetector::bucketsFor(const Footprint& f, int64_t& blockBytes,
                                                            int64_t& blocksPerRow) {
  switch (f.space) {
    case isa::Space::Sbuf:
      blockBytes = kOnChipBlockBytes;
      blocksPerRow = sbufBlocks_;
      return &sbuf_;
    case isa::Space::Psum:
      blockBytes = kOnChipBlockBytes;
      blocksPerRow = psumBlocks_;
      return &psum_;
    case isa::Space::Hbm: {
      if (f.tensor < 0 || f.tensor >= static_cast<int32_t>(hbm_.size())) return nullptr;
      std::vector<Bucket>& b = hbm_[f.tensor];
      if (b.empty()) {
        const isa::TensorDecl& t = program_.tensors[f.tensor];
        const int64_t bytes = std::max<int64_t>(1, t.numElements() * isa::dtypeBytes(t.dtype));
        b.resize(static_cast<size_t>((bytes + kHbmBlockBytes - 1) / kHbmBlockBytes));
      }
      blockBytes = kHbmBlockBytes;
      blocksPerRow = static_cast<int64_t>(b.size());
      return &b;
    }
  }
  return nullptr;
}

int32_t RaceDetector::newRecord(const Record& r) {
  if (!freeRecords_.empty()) {
    const int32_t id = freeRecords_.back();
    freeRecords_.pop_back();
    records_[static_cast<size_t>(id)] = r;
    return id;
  }
  records_.push_back(r);
  return static_cast<int32_t>(records_.size() - 1);
}

void RaceDetector::dropRef(int32_t id) {
  if (--records_[static_cast<size_t>(id)].refs == 0) freeRecords_.push_back(id);
}

void RaceDetector::accessOperand(int agent, int64_t index, const Operand& op) {
  const Footprint& fp = op.box;
  int64_t blockBytes = 0, blocksPerRow = 0;
  std::vector<Bucket>* buckets = bucketsFor(fp, blockBytes, blocksPerRow);
  if (!buckets || blocksPerRow == 0) return;
  const Record current{index,
                       clocks_[static_cast<size_t>(agent)][static_cast<size_t>(agent)],
                       static_cast<int8_t>(agent),
                       op.slot,
                       op.write,
                       0,
                       fp};
  const int32_t id = newRecord(current);
  const int64_t groups = static_cast<int64_t>(buckets->size()) / blocksPerRow;
  const int64_t g0 = fp.space == isa::Space::Hbm ? 0 : fp.partBegin / kPartitionsPerGroup;
  const int64_t g1 = fp.space == isa::Space::Hbm
                         ? 0
                         : std::min(groups - 1, int64_t{fp.partEnd - 1} / kPartitionsPerGroup);
  const int64_t b0 = std::clamp<int64_t>(fp.byteBegin / blockBytes, 0, blocksPerRow - 1);
  const int64_t b1 = std::clamp<int64_t>((fp.byteEnd - 1) / blockBytes, 0, blocksPerRow - 1);
  checked_.clear();
  for (int64_t g = g0; g <= g1; ++g) {
    for (int64_t blk = b0; blk <= b1; ++blk) {
      Bucket& bucket = (*buckets)[static_cast<size_t>(g * blocksPerRow + blk)];
      for (const Entry& e : bucket)
        if (e.agent != agent && (e.write || op.write)) check(e.record, current, *op.ap);
      remember(bucket, id, agent, op.write);
    }
  }
  if (records_[static_cast<size_t>(id)].refs == 0) freeRecords_.push_back(id);
}

void RaceDetector::remember(Bucket& bucket, int32_t id, int agent, bool write) {
  const Footprint& box = records_[static_cast<size_t>(id)].box;
  auto covers = [&](const Footprint& old) {
    return old.partBegin >= box.partBegin && old.partEnd <= box.partEnd &&
           old.byteBegin >= box.byteBegin && old.byteEnd <= box.byteEnd;
  };
  Entry* covered = nullptr;
  Entry* oldest = nullptr;
  int count = 0;
  for (Entry& e : bucket) {
    if (e.agent != agent || e.write != write) continue;
    ++count;
    if (!covered && covers(records_[static_cast<size_t>(e.record)].box)) covered = &e;
    if (!oldest || e.age < oldest->age) oldest = &e;
  }
  ++records_[static_cast<size_t>(id)].refs;
  const Entry entry{id, ++age_, static_cast<int8_t>(agent), write};
  Entry* replaced = covered ? covered : count >= kSlots ? oldest : nullptr;
  if (!replaced) {
    bucket.push_back(entry);
    return;
  }
  dropRef(replaced->record);
  *replaced = entry;
}

void RaceDetector::check(int32_t candidate, const Record& current, const isa::AccessPattern& ap) {
  const Record& prior = records_[static_cast<size_t>(candidate)];
  if (clocks_[current.agent][prior.agent] >= prior.epoch) return;
  if (std::find(checked_.begin(), checked_.end(), candidate) != checked_.end()) return;
  checked_.push_back(candidate);
  const uint64_t lo = static_cast<uint64_t>(std::min(prior.index, current.index));
  const uint64_t hi = static_cast<uint64_t>(std::max(prior.index, current.index));
  const uint64_t pair = (lo << 32) ^ hi;
  if (reportedPairs_.count(pair)) return;
  const isa::AccessPattern* priorAp =
      operandAt(program_.instructions[static_cast<size_t>(prior.index)], prior.slot);
  if (!priorAp || !boxesOverlap(prior.box, current.box) || !operandsOverlap(*priorAp, ap)) return;
  reportedPairs_.insert(pair);
  if (reports_.size() >= kMaxReports) {
    ++unreported_;
    return;
  }
  reports_.push_back(concat("race: ", describe(prior), " and ", describe(current),
                            " overlap with no semaphore ordering between them"));
}

std::string RaceDetector::describe(const Record& r) const {
  const isa::Instruction& inst = program_.instructions[r.index];
  const std::string where = r.agent >= isa::kNumEngines
                                ? concat("dma queue ", std::to_string(r.agent - isa::kNumEngines))
                                : std::string(isa::engineName(inst.engine));
  const isa::AccessPattern* ap = operandAt(inst, r.slot);
  return concat("instruction ", std::to_string(r.index), " (", isa::opcodeName(inst.opcode), " on ",
                where, ") ", r.write ? "writes " : "reads ", operandName(inst, r.slot), " ",
                ap ? rangeText(program_, *ap) : std::string("?"));
}

std::vector<std::string> RaceDetector::reports() const {
  std::vector<std::string> out = reports_;
  if (unreported_ > 0)
    out.push_back(concat("race: ", std::to_string(unreported_), " more races not listed"));
  return out;
}

}  // namespace neuronsim::sim
