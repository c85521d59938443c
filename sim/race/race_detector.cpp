// Vector-clock race detection over a bucketed shadow memory.
#include "sim/race/race_detector.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "isa/size_limits.h"

namespace neuronsim::sim {
namespace {

constexpr int64_t kOnChipBlockBytes = 1024;
constexpr int64_t kHbmBlockBytes = 16384;

std::string rangeText(const isa::Program& program, const isa::AccessPattern& ap) {
  const Footprint f = footprintOf(ap);
  std::string where(isa::spaceName(ap.space));
  if (ap.space == isa::Space::Hbm) {
    const bool known = ap.tensor >= 0 && ap.tensor < static_cast<int32_t>(program.tensors.size());
    where += known ? fmt::format(" {}", program.tensors[ap.tensor].name)
                   : fmt::format(" #{}", ap.tensor);
  } else {
    where += fmt::format(" p{}-{}", f.partBegin, f.partEnd - 1);
  }
  return fmt::format("{} bytes {}-{}", where, f.byteBegin, f.byteEnd - 1);
}

}  // namespace

RaceDetector::RaceDetector(const isa::Program& program, const MachineConfig& machine,
                           const std::vector<int64_t>& signalsPerSemaphore)
    : program_(program), semaphores_(program.semaphores.size()) {
  for (size_t sem = 0; sem < semaphores_.size() && sem < signalsPerSemaphore.size(); ++sem)
    semaphores_[sem].signals.reserve(static_cast<size_t>(signalsPerSemaphore[sem]));
  auto blocks = [](int64_t bytes) {
    return static_cast<size_t>(isa::ceilDiv(bytes, kOnChipBlockBytes));
  };
  sbuf_.resize(blocks(machine.geometry.sbufPartitionBytes));
  psum_.resize(blocks(machine.geometry.psumPartitionBytes));
  hbm_.resize(program.tensors.size());
}

void RaceDetector::acquire(int agent, int32_t sem, int64_t value) {
  if (sem < 0 || sem >= static_cast<int32_t>(semaphores_.size())) return;
  const isa::LargeVector<SignalRecord>& signals = semaphores_[static_cast<size_t>(sem)].signals;
  if (signals.empty()) return;
  const SignalRecord* pick = &signals.back();
  if (semaphores_[static_cast<size_t>(sem)].monotone) {
    // Waits mostly ask for recent values: look back a little before searching.
    auto it = signals.end();
    for (int step = 0; step < 4 && it != signals.begin() && std::prev(it)->value >= value; ++step)
      --it;
    if (it != signals.begin() && std::prev(it)->value >= value)
      it = std::lower_bound(signals.begin(), it, value,
                            [](const SignalRecord& r, int64_t v) { return r.value < v; });
    if (it != signals.end()) pick = &*it;
  }
  joinInto(clocks_[static_cast<size_t>(agent)], pick->cumulative);
}

void RaceDetector::release(int32_t sem, traces::Tick at, int64_t delta, const VectorClock& vc) {
  if (sem < 0 || sem >= static_cast<int32_t>(semaphores_.size())) return;
  SemaphoreHistory& h = semaphores_[static_cast<size_t>(sem)];
  if (delta <= 0) h.monotone = false;
  auto pos = h.signals.empty() || h.signals.back().at <= at
                 ? h.signals.end()
                 : std::upper_bound(h.signals.begin(), h.signals.end(), at,
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

void RaceDetector::access(int agent, int64_t index, std::span<const Operand> operands) {
  for (const Operand& op : operands) accessOperand(agent, index, op);
}

std::vector<RaceDetector::Bucket>* RaceDetector::bucketsFor(const Footprint& f,
                                                            int64_t& blockBytes) {
  switch (f.space) {
    case isa::Space::Sbuf:
      blockBytes = kOnChipBlockBytes;
      return &sbuf_;
    case isa::Space::Psum:
      blockBytes = kOnChipBlockBytes;
      return &psum_;
    case isa::Space::Hbm: {
      if (f.tensor < 0 || f.tensor >= static_cast<int32_t>(hbm_.size())) return nullptr;
      std::vector<Bucket>& b = hbm_[static_cast<size_t>(f.tensor)];
      if (b.empty()) {
        const isa::TensorDecl& t = program_.tensors[static_cast<size_t>(f.tensor)];
        const int64_t bytes = std::max<int64_t>(1, t.numElements() * isa::dtypeBytes(t.dtype));
        b.resize(static_cast<size_t>(isa::ceilDiv(bytes, kHbmBlockBytes)));
      }
      blockBytes = kHbmBlockBytes;
      return &b;
    }
  }
  return nullptr;
}

void RaceDetector::accessOperand(int agent, int64_t index, const Operand& op) {
  int64_t blockBytes = 0;
  std::vector<Bucket>* buckets = bucketsFor(op.box, blockBytes);
  if (!buckets || buckets->empty()) return;
  const Entry current{op.box,
                      index,
                      clocks_[static_cast<size_t>(agent)][static_cast<size_t>(agent)],
                      ++age_,
                      static_cast<int8_t>(agent),
                      op.slot,
                      op.write};
  const int64_t last = static_cast<int64_t>(buckets->size()) - 1;
  const int64_t b0 = std::clamp<int64_t>(op.box.byteBegin / blockBytes, 0, last);
  const int64_t b1 = std::clamp<int64_t>((op.box.byteEnd - 1) / blockBytes, 0, last);
  checked_.clear();
  if (op.box.space == isa::Space::Hbm) {
    const isa::AccessPattern* ap =
        isa::operandAt(program_.instructions[static_cast<size_t>(index)], op.slot);
    if (ap && visitRows(*buckets, *ap, current, b0, b1)) return;
  }
  for (int64_t b = b0; b <= b1; ++b) visit((*buckets)[static_cast<size_t>(b)], current);
}

bool RaceDetector::visitRows(std::vector<Bucket>& buckets, const isa::AccessPattern& ap,
                             const Entry& current, int64_t b0, int64_t b1) {
  const int64_t elementBytes = isa::dtypeBytes(ap.dtype);
  const int64_t budget = b1 - b0 + 1;
  struct Axis {
    int64_t step, num;
  };
  std::vector<Axis> rows;
  isa::Reach within;  ///< element reach of the axes whose steps stay within a bucket
  int64_t points = 1;
  const auto add = [&](int64_t step, int64_t num) {
    if (num <= 1 || step == 0) return true;
    if (step >= kHbmBlockBytes / elementBytes || step <= -kHbmBlockBytes / elementBytes) {
      if (num > budget / points) return false;
      points *= num;
      rows.push_back({step, num});
    } else {
      within.add(step, num);
    }
    return true;
  };
  if (!add(ap.partitionStep, ap.partitionCount)) return false;
  for (const isa::Dim& d : ap.dims)
    if (!add(d.step, d.num)) return false;
  if (within.overflow) return false;
  const __int128 lo = within.lo, hi = within.hi;
  const __int128 spanBuckets = ((hi - lo + 1) * elementBytes) / kHbmBlockBytes + 2;
  if (rows.empty() || static_cast<__int128>(points) * spanBuckets >= budget) return false;
  std::vector<int64_t> at(rows.size(), 0);
  int64_t prevBegin = -1, prevEnd = -1;
  for (int64_t point = 0; point < points; ++point) {
    __int128 base = ap.offset;
    for (size_t r = 0; r < rows.size(); ++r) base += static_cast<__int128>(rows[r].step) * at[r];
    const int64_t first = static_cast<int64_t>(
        std::clamp<__int128>((base + lo) * elementBytes / kHbmBlockBytes, b0, b1));
    const int64_t end = static_cast<int64_t>(
        std::clamp<__int128>(((base + hi + 1) * elementBytes - 1) / kHbmBlockBytes, b0, b1));
    for (int64_t b = first; b <= end; ++b)
      if (b < prevBegin || b > prevEnd) visit(buckets[static_cast<size_t>(b)], current);
    prevBegin = first;
    prevEnd = end;
    for (size_t r = rows.size(); r-- > 0;) {
      if (++at[r] < rows[r].num) break;
      at[r] = 0;
    }
  }
  return true;
}

void RaceDetector::visit(Bucket& bucket, const Entry& current) {
  const Footprint& box = current.box;
  const VectorClock& clock = clocks_[static_cast<size_t>(current.agent)];
  Entry* covered = nullptr;
  Entry* oldest = nullptr;
  int mine = 0;
  for (Entry& e : bucket) {
    if (e.agent != current.agent) {
      if ((e.write || current.write) && clock[static_cast<size_t>(e.agent)] < e.epoch)
        check(e, current);
      continue;
    }
    if (e.write != current.write) continue;
    ++mine;
    if (!covered && e.box.partBegin >= box.partBegin && e.box.partEnd <= box.partEnd &&
        e.box.byteBegin >= box.byteBegin && e.box.byteEnd <= box.byteEnd)
      covered = &e;
    if (!oldest || e.age < oldest->age) oldest = &e;
  }
  Entry* replaced = covered ? covered : mine >= kSlots ? oldest : nullptr;
  if (replaced)
    *replaced = current;
  else
    bucket.push_back(current);
}

void RaceDetector::check(const Entry& prior, const Entry& current) {
  const uint64_t key = static_cast<uint64_t>(prior.index) << 4 | static_cast<uint64_t>(prior.slot);
  if (std::find(checked_.begin(), checked_.end(), key) != checked_.end()) return;
  checked_.push_back(key);
  const uint64_t lo = static_cast<uint64_t>(std::min(prior.index, current.index));
  const uint64_t hi = static_cast<uint64_t>(std::max(prior.index, current.index));
  const uint64_t pair = (lo << 32) ^ hi;
  if (reportedPairs_.count(pair)) return;
  if (!boxesOverlap(prior.box, current.box)) return;
  const isa::AccessPattern* priorAp =
      isa::operandAt(program_.instructions[static_cast<size_t>(prior.index)], prior.slot);
  const isa::AccessPattern* currentAp =
      isa::operandAt(program_.instructions[static_cast<size_t>(current.index)], current.slot);
  if (!priorAp || !currentAp || !operandsOverlap(*priorAp, *currentAp)) return;
  reportedPairs_.insert(pair);
  if (reports_.size() >= kMaxReports) {
    ++unreported_;
    return;
  }
  reports_.push_back(fmt::format("race: {} and {} overlap with no semaphore ordering between them",
                                 describe(prior), describe(current)));
}

std::string RaceDetector::describe(const Entry& r) const {
  const isa::Instruction& inst = program_.instructions[static_cast<size_t>(r.index)];
  const std::string where = r.agent >= isa::kNumEngines
                                ? fmt::format("dma queue {}", r.agent - isa::kNumEngines)
                                : std::string(isa::engineName(inst.engine));
  const isa::AccessPattern* ap = isa::operandAt(inst, r.slot);
  return fmt::format("instruction {} ({} on {}) {} {} {}", r.index, isa::opcodeName(inst.opcode),
                     where, r.write ? "writes" : "reads", isa::operandName(inst, r.slot),
                     ap ? rangeText(program_, *ap) : std::string("?"));
}

std::vector<std::string> RaceDetector::reports() const {
  std::vector<std::string> out = reports_;
  if (unreported_ > 0) out.push_back(fmt::format("race: {} more races not listed", unreported_));
  return out;
}

}  // namespace neuronsim::sim
