// max_pooling_3d_backward's selection: compare sweeps over the window taps, chained on VectorE
// or keyed on any engine, and the engine balance that splits them.

#include "kernels/pooling/max_pool_select.h"

#include <algorithm>
#include <cmath>

namespace neuronsim::kernels {

using isa::AluOp;
using isa::Engine;

std::vector<TapBox> chunkTaps(const std::array<PoolAxis, 3>& axes, const PoolChunk& chunk) {
  std::vector<TapBox> taps;
  for (int64_t kd = 0; kd < axes[0].k; ++kd) {
    for (int64_t kh = 0; kh < axes[1].k; ++kh) {
      for (int64_t kw = 0; kw < axes[2].k; ++kw) {
        TapBox tb;
        tb.tap = {kd, kh, kw};
        for (int a = 0; a < 3; ++a) {
          tb.reach[a] = axes[a].tapOutputs(tb.tap[a], chunk.inputs[a], chunk.outputs[a]);
          tb.owned[a] = axes[a].tapOutputs(tb.tap[a], chunk.owned[a], chunk.outputs[a]);
        }
        if (!boxEmpty(tb.reach)) taps.push_back(tb);
      }
    }
  }
  return taps;
}

Tile outputView(const Tile& tile, const Box& base, const Box& r) {
  Tile view = tile;
  for (int a = 0; a < 3; ++a) view = view.slice(a, r[a].lo - base[a].lo, r[a].hi - base[a].lo);
  return compactView(view);
}

Tile inputView(const std::array<PoolAxis, 3>& axes, const Tile& tile, const Box& base,
               const Spatial& t, const Box& r) {
  Tile view = tile;
  for (int a = 0; a < 3; ++a) {
    const int64_t first = axes[a].inputOf(r[a].lo, t[a]) - base[a].lo;
    const int64_t last = axes[a].inputOf(r[a].hi - 1, t[a]) - base[a].lo;
    view = view.slice(a, first, last + 1, axes[a].s);
  }
  return compactView(view);
}

std::vector<Lane> splitLanes(const Box& box, int64_t gpsimdPercent) {
  if (gpsimdPercent <= 0 || gpsimdPercent >= 100 || boxElements(box) < 2)
    return {{box, gpsimdPercent > 50 ? Engine::GpSimd : Engine::Vector}};
  // The axis (outermost on ties) whose cut comes closest to the share, keeping the VectorE lane
  // even where it can: bf16 scalar_tensor_tensor streams at N only on even sizes (I2).
  int axis = -1;
  int64_t bestCut = 0;
  double bestError = 2.0;
  for (int a = 0; a < 3; ++a) {
    const int64_t size = box[a].size();
    if (size < 2) continue;
    int64_t cut = std::clamp<int64_t>((size * gpsimdPercent + 50) / 100, 0, size);
    const int64_t rest = boxElements(box) / size;
    if (rest % 2 == 1 && (size - cut) % 2 == 1 && cut > 0) --cut;
    const double error = std::abs(static_cast<double>(cut) / static_cast<double>(size) -
                                  static_cast<double>(gpsimdPercent) / 100.0);
    if (error < bestError - 1e-9) {
      axis = a;
      bestCut = cut;
      bestError = error;
    }
  }
  Box first = box, second = box;
  first[axis].hi = box[axis].lo + bestCut;
  second[axis].lo = box[axis].lo + bestCut;
  std::vector<Lane> lanes;
  if (!boxEmpty(first)) lanes.push_back({first, Engine::GpSimd});
  if (!boxEmpty(second)) lanes.push_back({second, Engine::Vector});
  return lanes;
}

namespace {

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (int x = 0; x < 3; ++x) r[x] = {std::max(a[x].lo, b[x].lo), std::min(a[x].hi, b[x].hi)};
  return r;
}

/// A VectorE lane every tap reaches whole runs chains: each step needs all taps.
bool chains(const Lane& lane, const std::vector<TapBox>& taps) {
  if (lane.engine != Engine::Vector) return false;
  return std::all_of(taps.begin(), taps.end(),
                     [&](const TapBox& tb) { return intersect(tb.reach, lane.box) == lane.box; });
}

/// Whether the first tap of a keyed lane's sweep (tap 0 for NaN, the last tap else) reaches
/// the whole lane, so that its weighted key starts the sweep.
bool keyedFirstWhole(const Lane& lane, const std::vector<TapBox>& taps, bool isNan) {
  const TapBox& first = isNan ? taps.front() : taps.back();
  return intersect(first.reach, lane.box) == lane.box;
}

/// One (tap, key kind, lane) step of the sweeps.
struct Unit {
  size_t tap;
  bool isNan;
  Box r;
  Engine engine;
  bool chain;
  bool first;  ///< a sweep's first step reaching its whole lane: it writes the accumulator
  Tile key;
};

}  // namespace

// Equality sweep (sel): a chain runs the taps backwards, acc = (acc + 1) * (x_j != ot), which
// leaves the first equal tap's index (T when none); keys are j where equal, else T, and the
// sweep keeps their minimum. NaN sweep (last): a chain runs forwards, acc = (acc - 1) *
// notNan_j from -notNan_0, which leaves (last NaN's index + 1) - T; keys are j where NaN, else
// -1, and the sweep keeps their maximum. Chain steps are scalar_tensor_tensor subtract-multiply
// on bf16 (VectorE streams them at N, I2); keys need a ScalarE weight and a max or min each.
void selectTaps(KernelBuilder& builder, const SelectTiles& tiles,
                const std::array<PoolAxis, 3>& axes, const Box& inputs, const Box& out,
                const std::vector<TapBox>& taps, const std::vector<Lane>& lanes, size_t ring,
                const std::function<void(size_t)>& compared) {
  const size_t count = taps.size();
  const float taps_f = static_cast<float>(count);
  std::vector<bool> chained;
  for (const Lane& lane : lanes) chained.push_back(chains(lane, taps));
  // A keyed lane whose first tap of a sweep reaches it whole starts from that tap's weighted key;
  // else from no tap (a memset on the other engine, which is not busy with this lane yet).
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (chained[l]) continue;
    const Engine other = lanes[l].engine == Engine::GpSimd ? Engine::Vector : Engine::GpSimd;
    if (!keyedFirstWhole(lanes[l], taps, false))
      builder.memset(outputView(tiles.sel, out, lanes[l].box), taps_f, other);
    if (!keyedFirstWhole(lanes[l], taps, true))
      builder.memset(outputView(tiles.last, out, lanes[l].box), -1.0f, other);
  }
  std::vector<Unit> units;
  for (size_t i = 0; i < count; ++i) {
    for (bool isNan : {true, false}) {
      for (size_t l = 0; l < lanes.size(); ++l) {
        const bool chain = chained[l];
        const size_t j = isNan ? i : count - 1 - i;
        const Box r = chain ? lanes[l].box : intersect(taps[j].reach, lanes[l].box);
        if (boxEmpty(r)) continue;
        const Tile key = outputView(
            boxTile((*tiles.keys)[static_cast<int64_t>(units.size())], tiles.rows, out), out, r);
        const bool first = i == 0 && (chain || r == lanes[l].box);
        units.push_back({j, isNan, r, lanes[l].engine, chain, first, key});
      }
    }
  }
  auto x = [&](const Tile& t, const Unit& u) {
    return inputView(axes, t, inputs, taps[u.tap].tap, u.r);
  };
  auto otFor = [&](const Unit& u) {
    const bool psum = tiles.otPsum && u.engine == Engine::Vector;
    return outputView(psum ? *tiles.otPsum : tiles.ot, out, u.r);
  };
  auto compare = [&](const Unit& u) {
    if (u.isNan) return;
    const Tile dst = u.chain && u.first ? outputView(tiles.sel, out, u.r) : u.key;
    builder.tensorTensor(dst, x(tiles.in, u), otFor(u), AluOp::NotEqual, u.engine);
  };
  auto weigh = [&](const Unit& u) {
    const float j = static_cast<float>(u.tap);
    if (u.chain) {
      if (u.isNan && u.first)
        builder.tensorScalar(outputView(tiles.last, out, u.r), x(tiles.notNan, u), AluOp::Multiply,
                             -1.0f, AluOp::Bypass, 0.0f, Engine::Scalar);
    } else if (u.isNan) {
      builder.tensorScalar(u.first ? outputView(tiles.last, out, u.r) : u.key, x(tiles.notNan, u),
                           AluOp::Multiply, -(j + 1.0f), AluOp::Add, j, Engine::Scalar);
    } else {
      builder.tensorScalar(u.first ? outputView(tiles.sel, out, u.r) : u.key, u.key,
                           AluOp::Multiply, taps_f - j, AluOp::Add, j, Engine::Scalar);
    }
  };
  auto accumulate = [&](const Unit& u) {
    const Tile acc = outputView(u.isNan ? tiles.last : tiles.sel, out, u.r);
    if (u.first) return;
    if (!u.chain) {
      builder.tensorTensor(acc, acc, u.key, u.isNan ? AluOp::Max : AluOp::Min, u.engine);
    } else {
      builder.scalarTensorTensor(acc, acc, AluOp::Subtract, u.isNan ? 1.0f : -1.0f, AluOp::Multiply,
                                 u.isNan ? x(tiles.notNan, u) : u.key);
    }
  };
  // The last unit comparing each tap.
  std::vector<size_t> lastCompare(count, units.size());
  for (size_t u = 0; u < units.size(); ++u)
    if (!units[u].isNan) lastCompare[units[u].tap] = u;
  // A key is live from its compare to its accumulate (`lead` units later): the ring holds
  // ring - 1 of them besides the one being compared. ScalarE weighs halfway, so no engine waits
  // on the one before it (a ring of 2 still compares the next unit while ScalarE weighs).
  const size_t lead = ring - 1, weighLag = lead / 2;
  for (size_t step = 0; step < units.size() + lead; ++step) {
    if (step < units.size()) compare(units[step]);
    if (step >= weighLag && step - weighLag < units.size()) {
      const Unit& u = units[step - weighLag];
      weigh(u);
      if (!u.isNan && lastCompare[u.tap] == step - weighLag) compared(u.tap);
    }
    if (step >= lead) accumulate(units[step - lead]);
  }
  // sel = the last NaN's index where output_tensor is NaN.
  builder.tensorTensor(compactView(tiles.flags), compactView(tiles.ot), compactView(tiles.ot),
                       AluOp::NotEqual, Engine::GpSimd);
  const bool separate = tiles.lastFinal.space() != tiles.last.space() ||
                        tiles.lastFinal.baseBytes() != tiles.last.baseBytes();
  for (size_t l = 0; l < lanes.size(); ++l) {
    const float shift = chained[l] ? taps_f - 1.0f : 0.0f;
    if (!separate && shift == 0.0f) continue;
    builder.tensorScalar(outputView(tiles.lastFinal, out, lanes[l].box),
                         outputView(tiles.last, out, lanes[l].box), AluOp::Add, shift,
                         AluOp::Bypass, 0.0f, Engine::Scalar);
  }
  builder.copyPredicated(compactView(tiles.sel), compactView(tiles.flags),
                         compactView(tiles.lastFinal));
}

namespace {

/// Busy cycles of VectorE, GpSimd and ScalarE on one work item; each instruction costs its
/// element work, at least MIN_II on VectorE and ScalarE, plus the start on GpSimd (I2).
struct EngineCycles {
  const isa::Geometry& geometry;
  double vector = 0, gpsimd = 0, scalar = 0;
  /// ns of work that runs in turn across engines: a GpSimd lane's sweeps wait for ScalarE's
  /// weights, queued behind the scatter of the item before (or for the sums it paces).
  double gpsimdLane = 0, scatter = 0;

  /// Adds one instruction; returns its time (ns).
  double add(Engine engine, double work) {
    if (engine == Engine::GpSimd) {
      const double c = static_cast<double>(geometry.gpsimdStartCycles) + work;
      gpsimd += c;
      return c / geometry.gpsimdGhz;
    }
    const double c = std::max(static_cast<double>(geometry.minIiCycles), work);
    if (engine == Engine::Scalar) {
      scalar += c;
      return c / geometry.scalarGhz;
    }
    vector += c;
    return c / geometry.vectorGhz;
  }
  /// The item's time (ns): its busiest engine (VectorE and GpSimd take turns where they share
  /// a port), or its GpSimd lane after the scatter when that is longer.
  double busiest(bool sharedPort) const {
    const double v = vector / geometry.vectorGhz, g = gpsimd / geometry.gpsimdGhz;
    const double path = gpsimdLane > 0 ? gpsimdLane + scatter : 0.0;
    return std::max({sharedPort ? v + g : std::max(v, g), scalar / geometry.scalarGhz, path});
  }
};

/// VectorE's element work per output of the balanced instructions: I2 (tensor_tensor 2N, N with
/// one input in PSUM; copy_predicated N with an operand outside SBUF; tensor_scalar N) and A2
/// (performance mode: bf16 tensor_tensor N, tensor_scalar N/2 or N/4).
struct SelectRates {
  double compareV, keyV, copyV, pickV;
  SelectRates(const SelectWork& w, const isa::Geometry& geometry) {
    const bool perfKeys = geometry.vectorPerfMode && w.bf16Keys;
    compareV = w.otInPsum || (geometry.vectorPerfMode && w.bf16) ? 1.0 : 2.0;
    keyV = perfKeys ? 1.0 : 2.0;
    copyV = w.operandInPsum ? 1.0 : 2.0;
    pickV = perfKeys ? 0.5 : 1.0;
  }
};

/// What an item emits whatever its lanes: GpSimd's NaN mask and flags, VectorE's final
/// predicated copy, ScalarE's output_tensor copy, and the scatter per owning tap (ScalarE's copy
/// and predicate, or VectorE's pick and GpSimd's sum; VectorE's predicated copy).
void addItemWork(EngineCycles& cycles, const SelectWork& w, const SelectRates& rate,
                 const Box& inputs, const Box& owned, const Box& out,
                 const std::vector<TapBox>& taps) {
  const double outputs = static_cast<double>(boxElements(out));
  cycles.add(Engine::GpSimd, static_cast<double>(boxElements(inputs)));
  cycles.add(Engine::GpSimd, 2.0 * outputs);
  cycles.add(Engine::Vector, (w.lastInPsum ? 1.0 : 2.0) * outputs);
  if (w.otInPsum) cycles.add(Engine::Scalar, outputs);
  int64_t covered = 0;
  for (const TapBox& tb : taps) {
    const double n = static_cast<double>(boxElements(tb.owned));
    if (n == 0) continue;
    covered += boxElements(tb.owned);
    if (w.disjoint) {
      cycles.scatter += cycles.add(Engine::Scalar, n);
      const bool fastFirst = w.fastPredicate && covered == boxElements(tb.owned);
      cycles.scatter +=
          cycles.add(fastFirst ? Engine::Vector : Engine::Scalar, fastFirst ? n / 4 : n);
      cycles.add(Engine::Vector, rate.copyV * n);
    } else {
      // Each tap's pick and predicated copy on VectorE and its sum on GpSimd, in step.
      const double picked =
          cycles.add(Engine::Vector, rate.pickV * n) + cycles.add(Engine::Vector, rate.copyV * n);
      cycles.scatter += std::max(picked, cycles.add(Engine::GpSimd, 2.0 * n));
    }
  }
  if (!w.disjoint || covered != boxElements(owned))
    cycles.add(Engine::Scalar, static_cast<double>(boxElements(owned)));
}

/// What selectTaps emits for one lane: a chained lane compares every tap and steps both chains;
/// a keyed lane's engine compares and keeps two keys per tap that ScalarE weighs, from two
/// memsets on the other engine; then the last NaN's shift on ScalarE.
void addLaneWork(EngineCycles& cycles, const SelectWork& w, const SelectRates& rate,
                 const Lane& lane, const std::vector<TapBox>& taps) {
  const double n = static_cast<double>(boxElements(lane.box));
  const bool chain = chains(lane, taps);
  if (w.lastInPsum || chain) cycles.add(Engine::Scalar, n);
  if (chain) {
    const double step = w.bf16Keys && boxElements(lane.box) % 2 == 0 ? n : 2.0 * n;
    for (size_t j = 0; j < taps.size(); ++j) cycles.add(Engine::Vector, rate.compareV * n);
    for (size_t j = 1; j < taps.size(); ++j) {
      cycles.add(Engine::Vector, step);
      cycles.add(Engine::Vector, step);
    }
    cycles.add(Engine::Scalar, n);
    return;
  }
  const bool onGpsimd = lane.engine == Engine::GpSimd;
  auto laneAdd = [&](double work) {
    const double ns = cycles.add(lane.engine, work);
    if (onGpsimd) cycles.gpsimdLane += ns;
  };
  for (bool isNan : {false, true})
    if (!keyedFirstWhole(lane, taps, isNan))
      cycles.add(onGpsimd ? Engine::Vector : Engine::GpSimd, n);
  for (size_t j = 0; j < taps.size(); ++j) {
    const double m = static_cast<double>(boxElements(intersect(taps[j].reach, lane.box)));
    if (m == 0) continue;
    laneAdd((onGpsimd ? 2.0 : rate.compareV) * m);
    for (bool isNan : {false, true}) {
      cycles.add(Engine::Scalar, m);
      const bool first = j == (isNan ? 0 : taps.size() - 1) && m == n;
      if (!first) laneAdd((onGpsimd ? 2.0 : rate.keyV) * m);
    }
  }
}

}  // namespace

std::vector<Lane> balancedLanes(const SelectWork& w, const Box& inputs, const Box& owned,
                                const Box& out, const std::vector<TapBox>& taps,
                                const std::vector<double>& fillWork,
                                const isa::Geometry& geometry) {
  const SelectRates rate(w, geometry);
  EngineCycles fixed{geometry};
  for (double work : fillWork) fixed.add(Engine::GpSimd, work);
  addItemWork(fixed, w, rate, inputs, owned, out, taps);
  std::vector<Lane> best;
  double bestTime = 0;
  int64_t previous = -1;  // GpSimd outputs of the previous percent's cut
  for (int64_t percent = 0; percent <= 100; ++percent) {
    std::vector<Lane> lanes = splitLanes(out, percent);
    int64_t gpsimdOutputs = 0;
    for (const Lane& lane : lanes)
      if (lane.engine == Engine::GpSimd) gpsimdOutputs += boxElements(lane.box);
    if (gpsimdOutputs == previous) continue;
    previous = gpsimdOutputs;
    EngineCycles cycles = fixed;
    for (const Lane& lane : lanes) addLaneWork(cycles, w, rate, lane, taps);
    const double time = cycles.busiest(geometry.accessConflicts);
    if (best.empty() || time < bestTime) {
      best = std::move(lanes);
      bestTime = time;
    }
  }
  return best;
}

}  // namespace neuronsim::kernels
