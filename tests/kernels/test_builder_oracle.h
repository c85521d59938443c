#pragma once
// Test oracle: which earlier instructions a program's semaphores guarantee complete before
// each instruction starts, and which instruction pairs touch the same bytes.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "isa/dtype.h"
#include "isa/program.h"

namespace neuronsim::kernels::testing {

/// A set of memory cells (SBUF/PSUM bytes, HBM elements) as a dense bitmap.
struct Cells {
  std::vector<uint64_t> bits;
  bool intersects(const Cells& o) const {
    for (size_t i = 0; i < bits.size(); ++i)
      if (bits[i] & o.bits[i]) return true;
    return false;
  }
};

/// Numbers every cell a program can touch: on-chip (space, partition, byte) and HBM
/// (tensor, element).
class CellSpace {
 public:
  explicit CellSpace(const isa::Program& program) {
    for (const auto& inst : program.instructions)
      forEachOperand(inst, [&](const isa::AccessPattern& ap) {
        if (ap.space != isa::Space::Hbm) onChipBytes_ = std::max(onChipBytes_, maxByte(ap) + 1);
      });
    hbmBase_.push_back(2 * 128 * onChipBytes_);
    for (const auto& t : program.tensors) hbmBase_.push_back(hbmBase_.back() + t.numElements());
  }

  template <class F>
  static void forEachOperand(const isa::Instruction& inst, F f) {
    for (const auto& s : inst.srcs) f(s);
    if (inst.bias) f(*inst.bias);
    if (inst.scale.vec) f(*inst.scale.vec);
    if (inst.operand0.vec) f(*inst.operand0.vec);
    if (inst.operand1.vec) f(*inst.operand1.vec);
    f(inst.dst);
    if (inst.reduceDst) f(*inst.reduceDst);
  }

  Cells empty() const { return Cells{std::vector<uint64_t>((hbmBase_.back() + 63) / 64, 0)}; }

  void add(const isa::AccessPattern& ap, Cells& cells) const {
    const int64_t eb = isa::dtypeBytes(ap.dtype);
    std::vector<int64_t> idx(ap.dims.size(), 0);
    for (int32_t p = 0; p < ap.partitionCount; ++p) {
      std::fill(idx.begin(), idx.end(), 0);
      while (true) {
        int64_t e = 0;
        for (size_t j = 0; j < idx.size(); ++j) e += idx[j] * ap.dims[j].step;
        if (ap.space == isa::Space::Hbm) {
          set(cells, hbmBase_[ap.tensor] + ap.offset + p * ap.partitionStep + e);
        } else {
          const int64_t base =
              ((ap.space == isa::Space::Psum ? 128 : 0) + ap.partitionStart + p) * onChipBytes_;
          for (int64_t b = 0; b < eb; ++b) set(cells, base + ap.offset + e * eb + b);
        }
        int j = static_cast<int>(idx.size()) - 1;
        while (j >= 0 && ++idx[j] == ap.dims[j].num) idx[j--] = 0;
        if (j < 0) break;
      }
    }
  }

 private:
  static void set(Cells& c, int64_t i) { c.bits[i / 64] |= uint64_t{1} << (i % 64); }
  static int64_t maxByte(const isa::AccessPattern& ap) {
    int64_t hi = 0;
    for (const auto& d : ap.dims) hi += std::max<int64_t>(0, d.step * (d.num - 1));
    return ap.offset + (hi + 1) * isa::dtypeBytes(ap.dtype) - 1;
  }
  int64_t onChipBytes_ = 1;
  std::vector<int64_t> hbmBase_;
};

/// before[j][i]: instruction i is guaranteed complete when instruction j starts. Rules: an
/// engine runs its compute instructions one at a time in order; a DMA is triggered in its
/// engine's order but completes on its own; a wait "sem >= v" means the first v instructions
/// that signal sem have completed (queues complete in order).
inline std::vector<std::vector<bool>> happensBefore(const isa::Program& program) {
  const size_t n = program.instructions.size();
  std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
  std::vector<std::vector<size_t>> signalers(program.semaphores.size());
  std::vector<int64_t> lastOnEngine(isa::kNumEngines, -1);
  for (size_t j = 0; j < n; ++j) {
    const isa::Instruction& inst = program.instructions[j];
    const int e = static_cast<int>(inst.engine);
    if (lastOnEngine[e] >= 0) {
      const size_t prev = static_cast<size_t>(lastOnEngine[e]);
      for (size_t i = 0; i < n; ++i)
        if (before[prev][i]) before[j][i] = true;
      if (!isa::isDma(program.instructions[prev].opcode)) before[j][prev] = true;
    }
    for (const isa::SemWait& w : inst.waits) {
      const auto& sig = signalers.at(w.sem);
      for (int64_t v = 0; v < w.value && v < static_cast<int64_t>(sig.size()); ++v) {
        const size_t x = sig[v];
        before[j][x] = true;
        for (size_t i = 0; i < n; ++i)
          if (before[x][i]) before[j][i] = true;
      }
    }
    for (const isa::SemSignal& s : inst.signals) signalers.at(s.sem).push_back(j);
    lastOnEngine[e] = static_cast<int64_t>(j);
  }
  return before;
}

/// Pairs (i, j), i < j, that conflict (RAW, WAR or WAW on a common cell) but are not ordered.
inline std::vector<std::pair<size_t, size_t>> unorderedConflicts(const isa::Program& program) {
  const auto before = happensBefore(program);
  const CellSpace space(program);
  std::vector<Cells> reads, writes;
  for (const auto& inst : program.instructions) {
    Cells r = space.empty(), w = space.empty();
    for (const auto& s : inst.srcs) space.add(s, r);
    if (inst.bias) space.add(*inst.bias, r);
    if (inst.scale.vec) space.add(*inst.scale.vec, r);
    if (inst.operand0.vec) space.add(*inst.operand0.vec, r);
    if (inst.operand1.vec) space.add(*inst.operand1.vec, r);
    space.add(inst.dst, w);
    if (inst.reduceDst) space.add(*inst.reduceDst, w);
    reads.push_back(std::move(r));
    writes.push_back(std::move(w));
  }
  std::vector<std::pair<size_t, size_t>> bad;
  for (size_t j = 0; j < reads.size(); ++j)
    for (size_t i = 0; i < j; ++i) {
      if (before[j][i]) continue;
      if (writes[i].intersects(reads[j]) || reads[i].intersects(writes[j]) ||
          writes[i].intersects(writes[j]))
        bad.emplace_back(i, j);
    }
  return bad;
}

}  // namespace neuronsim::kernels::testing
