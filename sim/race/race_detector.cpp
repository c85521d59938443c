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

const isa::AccessPattern* operandAt(const isa::Instruction& inst, int slot) {
  if (slot == 0) return &inst.dst;
  const int nsrc = static_cast<int>(inst.srcs.size());
  if (slot <= nsrc) return &inst.srcs[slot - 1];
  switch (slot - nsrc) {
    case 1:
      return inst.bias ? &*inst.bias : nullptr;
    case 2:
      return inst.reduceDst ? &*inst.reduceDst : nullptr;
    case 3:
      return inst.operand0.vec ? &*inst.operand0.vec : nullptr;
    case 4:
      return inst.operand1.vec ? &*inst.operand1.vec : nullptr;
    case 5:
      return inst.scale.vec ? &*inst.scale.vec : nullptr;
    default:
      return nullptr;
  }
}

RaceDetector::Bucket RaceDetector::emptyBucket() {
  Bucket empty;
  for (Slots& s : empty.writes) s.fill(-1);
  for (Slots& s : empty.reads) s.fill(-1);
  return empty;
}

RaceDetector::RaceDetector(const isa::Program& program, const MachineConfig& machine)
    : program_(program), semaphores_(program.semaphores.size()) {
  const Bucket empty = emptyBucket();
  const int64_t groups =
      (machine.geometry.partitions + kPartitionsPerGroup - 1) / kPartitionsPerGroup;
  sbufBlocks_ = (machine.geometry.sbufPartitionBytes + kOnChipBlockBytes - 1) / kOnChipBlockBytes;
  psumBlocks_ = (machine.geometry.psumPartitionBytes + kOnChipBlockBytes - 1) / kOnChipBlockBytes;
  sbuf_.assign(static_cast<size_t>(groups * sbufBlocks_), empty);
  psum_.assign(static_cast<size_t>(groups * psumBlocks_), empty);
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

void RaceDetector::release(int32_t sem, double ns, int64_t delta, const VectorClock& vc) {
  if (sem < 0 || sem >= static_cast<int32_t>(semaphores_.size())) return;
  SemaphoreHistory& h = semaphores_[sem];
  if (delta <= 0) h.monotone = false;
  auto pos = std::upper_bound(h.signals.begin(), h.signals.end(), ns,
                              [](double t, const SignalRecord& r) { return t < r.ns; });
  pos = h.signals.insert(pos, SignalRecord{ns, delta, 0, vc, vc});
  for (auto it = pos; it != h.signals.end(); ++it) {
    if (it == h.signals.begin()) {
      it->value = it->delta;
      it->cumulative = it->vc;
    } else {
      it->value = std::prev(it)->value + it->delta;
      it->cumulative = it->vc;
      joinInto(it->cumulative, std::prev(it)->cumulative);
    }
  }
}

void RaceDetector::access(int agent, int64_t index) {
  const isa::Instruction& inst = program_.instructions[index];
  for (int slot = 0;; ++slot) {
    if (slot > static_cast<int>(inst.srcs.size()) + 5) break;
    const isa::AccessPattern* ap = operandAt(inst, slot);
    if (!ap) continue;
    const bool write = slot == 0 || (slot == static_cast<int>(inst.srcs.size()) + 2);
    accessOperand(agent, index, slot, *ap, write);
  }
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
        const Bucket empty = emptyBucket();
        b.assign(static_cast<size_t>((bytes + kHbmBlockBytes - 1) / kHbmBlockBytes), empty);
      }
      blockBytes = kHbmBlockBytes;
      blocksPerRow = static_cast<int64_t>(b.size());
      return &b;
    }
  }
  return nullptr;
}

void RaceDetector::accessOperand(int agent, int64_t index, int slot, const isa::AccessPattern& ap,
                                 bool write) {
  const Footprint fp = footprintOf(ap);
  int64_t blockBytes = 0, blocksPerRow = 0;
  std::vector<Bucket>* buckets = bucketsFor(fp, blockBytes, blocksPerRow);
  if (!buckets || blocksPerRow == 0) return;
  const int32_t id = static_cast<int32_t>(records_.size());
  const Record current{
      index, clocks_[agent][agent], static_cast<int8_t>(agent), static_cast<int8_t>(slot), write,
      fp};
  records_.push_back(current);
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
      for (int other = 0; other < kNumAgents; ++other) {
        if (other == agent) continue;
        for (int32_t w : bucket.writes[other])
          if (w >= 0) check(w, current, ap);
        if (!write) continue;
        for (int32_t r : bucket.reads[other])
          if (r >= 0) check(r, current, ap);
      }
      remember((write ? bucket.writes : bucket.reads)[agent], id);
    }
  }
}

void RaceDetector::remember(Slots& slots, int32_t id) {
  const Footprint& box = records_[id].box;
  int pick = 0;
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i] < 0) {
      pick = i;
      break;
    }
    const Footprint& old = records_[slots[i]].box;
    if (old.partBegin >= box.partBegin && old.partEnd <= box.partEnd &&
        old.byteBegin >= box.byteBegin && old.byteEnd <= box.byteEnd) {
      pick = i;
      break;
    }
    if (slots[i] < slots[pick]) pick = i;
  }
  slots[pick] = id;
}

void RaceDetector::check(int32_t candidate, const Record& current, const isa::AccessPattern& ap) {
  const Record& prior = records_[candidate];
  if (clocks_[current.agent][prior.agent] >= prior.epoch) return;
  if (std::find(checked_.begin(), checked_.end(), candidate) != checked_.end()) return;
  checked_.push_back(candidate);
  const uint64_t lo = static_cast<uint64_t>(std::min(prior.index, current.index));
  const uint64_t hi = static_cast<uint64_t>(std::max(prior.index, current.index));
  const uint64_t pair = (lo << 32) ^ hi;
  if (reportedPairs_.count(pair)) return;
  const isa::AccessPattern* priorAp = operandAt(program_.instructions[prior.index], prior.slot);
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
