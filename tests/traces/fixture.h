#pragma once
// A small hand-built program and event log with known times, shared by the traces tests.
//
// Timeline (ns):  sync  #0 dma_copy trigger [0,100]
//                 q0    #0 load 65536 B over 128 partitions, issued 100, moves [1400,2400]
//                 vector #1 tensor_tensor [2400,3000], semaphore stall from 0 (released by #0)
//                 tensor #2 nc_matmul [3000,3500], semaphore stall from 0 (released by #1)
//                 sync  #3 dma_copy trigger [3500,3600], ready 100, semaphore stall (released by
//                 #2) q1    #3 store 524288 B over 128 partitions, issued 3600, moves [4900,5000]
// total 5000 ns.

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/machine_facts.h"

namespace fixture {

using namespace neuronsim;

inline isa::AccessPattern sbuf(int partitions, int64_t free) {
  isa::AccessPattern ap;
  ap.space = isa::Space::Sbuf;
  ap.partitionCount = partitions;
  ap.dims = {{1, free}};
  return ap;
}

inline isa::AccessPattern hbm(int partitions, int64_t free) {
  isa::AccessPattern ap = sbuf(partitions, free);
  ap.space = isa::Space::Hbm;
  ap.tensor = 0;
  ap.partitionStep = free;
  return ap;
}

inline isa::Program program() {
  isa::Program p;
  p.tensors.push_back({"x", {128, 1024}, isa::Dtype::Fp32, isa::TensorKind::Input});
  p.semaphores = {"sem_q0", "sem_vector", "sem_tensor", "sem_q1"};
  isa::Instruction load;
  load.opcode = isa::Opcode::DmaCopy;
  load.engine = isa::Engine::Sync;
  load.dmaQueue = 0;
  load.dst = sbuf(128, 128);
  load.srcs = {hbm(128, 128)};
  load.signals = {{0, isa::SignalAt::Complete, 1}};
  isa::Instruction add;
  add.opcode = isa::Opcode::TensorTensor;
  add.engine = isa::Engine::Vector;
  add.op0 = isa::AluOp::Add;
  add.dst = sbuf(128, 128);
  add.srcs = {sbuf(128, 128), sbuf(128, 128)};
  add.waits = {{0, 1}};
  add.signals = {{1, isa::SignalAt::Complete, 1}};
  isa::Instruction mm;
  mm.opcode = isa::Opcode::NcMatmul;
  mm.engine = isa::Engine::Tensor;
  mm.dst = sbuf(128, 512);
  mm.dst.space = isa::Space::Psum;
  mm.srcs = {sbuf(128, 128), sbuf(128, 512)};
  mm.waits = {{1, 1}};
  mm.signals = {{2, isa::SignalAt::Complete, 1}};
  isa::Instruction store = load;
  store.dmaQueue = 1;
  store.dst = hbm(128, 1024);
  store.srcs = {sbuf(128, 1024)};
  store.waits = {{2, 1}};
  store.signals = {{3, isa::SignalAt::Complete, 1}};
  p.instructions = {load, add, mm, store};
  return p;
}

inline traces::InstructionEvent inst(int64_t index, isa::Engine engine, isa::Opcode opcode,
                                     double ready, double start, double end) {
  traces::InstructionEvent e;
  e.index = index;
  e.engine = engine;
  e.opcode = opcode;
  e.ready = traces::Tick::fromNs(ready);
  e.start = traces::Tick::fromNs(start);
  e.end = traces::Tick::fromNs(end);
  return e;
}

inline traces::InstructionEvent waiting(traces::InstructionEvent e, int32_t sem, int64_t on) {
  e.stall = traces::StallCause::Semaphore;
  e.waitSemaphore = sem;
  e.waitValue = 1;
  e.waitedOnInstruction = on;
  return e;
}

inline traces::DmaEvent dma(int64_t index, int32_t queue, double issue, double start, double end,
                            int64_t bytes) {
  traces::DmaEvent d;
  d.index = index;
  d.queue = queue;
  d.issue = traces::Tick::fromNs(issue);
  d.start = traces::Tick::fromNs(start);
  d.end = traces::Tick::fromNs(end);
  d.bytes = bytes;
  d.hbmBytes = bytes;
  d.descriptors = 128;
  d.dmaEngines = 16;
  return d;
}

inline traces::EventLog log() {
  using isa::Engine;
  using isa::Opcode;
  traces::EventLog l;
  l.instruction(inst(0, Engine::Sync, Opcode::DmaCopy, 0, 0, 100));
  auto add = waiting(inst(1, Engine::Vector, Opcode::TensorTensor, 0, 2400, 3000), 0, 0);
  add.cycles = 576;
  add.bytesRead = 131072;
  add.bytesWritten = 65536;
  l.instruction(add);
  auto mm = waiting(inst(2, Engine::Tensor, Opcode::NcMatmul, 0, 3000, 3500), 1, 1);
  mm.flops = 2LL * 128 * 128 * 512;
  mm.cycles = 1200;
  l.instruction(mm);
  l.instruction(waiting(inst(3, Engine::Sync, Opcode::DmaCopy, 100, 3500, 3600), 2, 2));
  l.dma(dma(0, 0, 100, 1400, 2400, 65536));
  l.dma(dma(3, 1, 3600, 4900, 5000, 524288));
  l.counter({traces::Counter::PeUtilization, traces::Tick::fromNs(0), 0.0});
  l.counter({traces::Counter::PeUtilization, traces::Tick::fromNs(3000), 1.0});
  l.counter({traces::Counter::PeUtilization, traces::Tick::fromNs(3500), 0.0});
  return l;
}

/// A machine with (Trn2-like) or without (Trn1-like) the PE throttle; DMA at 23 B/ns per engine.
inline traces::MachineFacts machine(bool throttle) {
  traces::MachineFacts m;
  m.name = throttle ? "trn2" : "trn1";
  m.params = {
      {"pe_throttle", throttle}, {"throttle_window_ns", 3000}, {"dma_engine_bytes_per_ns", 23.0},
      {"dma_engines", 16},       {"hbm_gbps", 362.5},          {"dma_latency_ns", 1300}};
  return m;
}

inline nlohmann::json summary(double totalNs = 5000) {
  return {{"kernel", "fixture"}, {"machine", "trn2"}, {"dtype", "fp32"}, {"total_ns", totalNs}};
}

/// A fresh path in the temp directory, removed by the destructor.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name) {
    path = std::filesystem::temp_directory_path() /
           fmt::format("neuronsim_traces_{}_{}", ::getpid(), name);
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  std::string str() const { return path.string(); }
};

}  // namespace fixture
