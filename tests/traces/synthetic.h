#pragma once
// A synthetic double-buffered matmul-like run of any size, for fixtures and scale checks.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/summary.h"

namespace synthetic {

using namespace neuronsim;

struct Run {
  isa::Program program;
  traces::EventLog log;
  nlohmann::json summary;
};

/// `tiles` iterations of: load (queue t%4) -> matmul -> copy out of PSUM (vector or scalar)
/// -> store (queue 4 + t%2), each engine in order, with semaphore stalls where they arise.
inline Run makeRun(int tiles) {
  Run run;
  auto& p = run.program;
  p.tensors.push_back({"lhs", {128, 512}, isa::Dtype::Bf16, isa::TensorKind::Input});
  p.semaphores = {"load", "mm", "copy", "store"};
  using traces::Tick;
  auto ns = [](double v) { return Tick::fromNs(v); };
  Tick syncFree, peFree, vecFree, actFree;
  Tick queueFree[6];
  for (int t = 0; t < tiles; ++t) {
    auto add = [&](isa::Opcode op, isa::Engine engine, int queue) {
      isa::Instruction inst;
      inst.opcode = op;
      inst.engine = engine;
      inst.dmaQueue = queue;
      inst.dst.space = isa::Space::Sbuf;
      inst.dst.partitionCount = 128;
      inst.dst.dims = {{1, 512}};
      inst.srcs = {inst.dst};
      p.instructions.push_back(inst);
      return static_cast<int64_t>(p.instructions.size() - 1);
    };
    const int64_t load = add(isa::Opcode::DmaCopy, isa::Engine::Sync, t % 4);
    traces::InstructionEvent trig{load,     isa::Engine::Sync, isa::Opcode::DmaCopy,
                                  syncFree, syncFree,          syncFree + ns(60)};
    run.log.instruction(trig);
    syncFree += ns(60);
    traces::DmaEvent ld;
    ld.index = load;
    ld.queue = t % 4;
    ld.issue = trig.end;
    ld.start = std::max(trig.end + ns(1300), queueFree[t % 4]);
    ld.end = ld.start + ns(5700);
    ld.bytes = 131072;
    ld.hbmBytes = 131072;
    ld.descriptors = 128;
    ld.dmaEngines = 16;
    queueFree[t % 4] = ld.end;
    run.log.dma(ld);

    const int64_t mm = add(isa::Opcode::NcMatmul, isa::Engine::Tensor, -1);
    traces::InstructionEvent m{mm,     isa::Engine::Tensor,      isa::Opcode::NcMatmul,
                               peFree, std::max(peFree, ld.end), Tick()};
    m.end = m.start + ns(213.3);
    if (ld.end > peFree) {
      m.stall = traces::StallCause::Semaphore;
      m.waitSemaphore = 0;
      m.waitValue = t + 1;
      m.waitedOnInstruction = load;
    }
    m.cycles = 512;
    m.flops = 2LL * 128 * 128 * 512;
    peFree = m.end;
    run.log.instruction(m);

    const bool onVector = t % 2 == 0;
    Tick& free = onVector ? vecFree : actFree;
    const int64_t cp = add(onVector ? isa::Opcode::TensorCopy : isa::Opcode::Activation,
                           onVector ? isa::Engine::Vector : isa::Engine::Scalar, -1);
    traces::InstructionEvent c{cp,
                               onVector ? isa::Engine::Vector : isa::Engine::Scalar,
                               onVector ? isa::Opcode::TensorCopy : isa::Opcode::Activation,
                               free,
                               std::max(free, m.end),
                               Tick()};
    c.end = c.start + ns(533.3);
    if (m.end > free) {
      c.stall = traces::StallCause::Semaphore;
      c.waitSemaphore = 1;
      c.waitValue = t + 1;
      c.waitedOnInstruction = mm;
    }
    c.cycles = 512;
    c.bytesRead = 262144;
    c.bytesWritten = 131072;
    free = c.end;
    run.log.instruction(c);

    const int q = 4 + t % 2;
    const int64_t st = add(isa::Opcode::DmaCopy, isa::Engine::Sync, q);
    traces::InstructionEvent strig{st,       isa::Engine::Sync,         isa::Opcode::DmaCopy,
                                   syncFree, std::max(syncFree, c.end), Tick()};
    strig.end = strig.start + ns(60);
    if (c.end > syncFree) {
      strig.stall = traces::StallCause::Semaphore;
      strig.waitSemaphore = 2;
      strig.waitValue = t + 1;
      strig.waitedOnInstruction = cp;
    }
    syncFree = strig.end;
    run.log.instruction(strig);
    traces::DmaEvent sd = ld;
    sd.index = st;
    sd.queue = q;
    sd.issue = strig.end;
    sd.start = std::max(strig.end + ns(1300), queueFree[q]);
    sd.end = sd.start + ns(2900);
    sd.bytes = 65536;
    sd.hbmBytes = 65536;
    queueFree[q] = sd.end;
    run.log.dma(sd);
    run.log.counter({traces::Counter::PeUtilization, m.start, 1.0});
    run.log.counter({traces::Counter::PeUtilization, m.end, 0.0});
    run.log.counter({traces::Counter::PendingDmas, ld.issue, static_cast<double>(t % 4 + 1)});
  }
  Tick total;
  for (const auto& e : run.log.instructions) total = std::max(total, e.end);
  for (const auto& d : run.log.dmas) total = std::max(total, d.end);
  traces::RunInfo info{"synthetic_matmul", "trn2", "bf16", 78643.2, 360.0, 0};
  traces::RunTotals totals;
  totals.total = total;
  for (const auto& e : run.log.instructions) {
    auto& engine = totals.engines[static_cast<size_t>(e.engine)];
    engine.busy += e.end - e.start;
    engine.active += e.end - e.start;
    ++engine.instructions;
    totals.flops += e.flops;
  }
  std::vector<std::pair<Tick, Tick>> moving;
  for (const auto& d : run.log.dmas) {
    totals.dmaBytes += d.bytes;
    totals.hbmBytes += d.hbmBytes;
    ++totals.dmaTransfers;
    moving.emplace_back(d.start, d.end);
  }
  std::sort(moving.begin(), moving.end());
  Tick dmaEnd;
  for (const auto& [start, end] : moving) {
    totals.dmaActive += std::max(Tick(), end - std::max(start, dmaEnd));
    dmaEnd = std::max(dmaEnd, end);
  }
  totals.instructions = static_cast<int64_t>(run.program.instructions.size());
  info.minHbmBytes = totals.hbmBytes;
  run.summary = traces::summaryJson(info, totals);
  return run;
}

}  // namespace synthetic
