#pragma once
// The state the engine and DMA modules of one simulated NeuronCore share: the program, the
// semaphores, the race detector, the port arbiter, the recorder, and one wake-up event per
// agent. Owned by simulate().

#include <array>
#include <exception>
#include <memory>
#include <span>
#include <systemc>

#include "isa/memory_state.h"
#include "isa/program.h"
#include "sim/core/port_arbiter.h"
#include "sim/core/run_recorder.h"
#include "sim/core/semaphore_bank.h"
#include "sim/machine_config.h"
#include "sim/race/race_detector.h"
#include "traces/event.h"

namespace neuronsim::sim {

class DmaModule;

class CoreContext {
 public:
  /// `psumEngines`: the engines (bit per engine) with an instruction that accesses PSUM.
  CoreContext(const isa::Program& program, const MachineConfig& machine,
              const SemaphoreUsage& usage, uint32_t psumEngines, isa::MemoryState* memory,
              traces::EventSink* sink, bool detectRaces);

  const isa::Program& program() const { return program_; }
  const MachineConfig& machine() const { return machine_; }
  /// Where instruction semantics run; null in timing-only mode.
  isa::MemoryState* memory() const { return memory_; }
  SemaphoreBank& semaphores() { return semaphores_; }
  /// Null when race detection is off.
  RaceDetector* races() { return races_.get(); }
  PortArbiter& arbiter() { return arbiter_; }
  RunRecorder& recorder() { return recorder_; }
  DmaModule& dma() { return *dma_; }
  void attachDma(DmaModule& dma) { dma_ = &dma; }
  /// Notified when a value `agent` waits for may have been reached.
  sc_core::sc_event& wakeEvent(int agent) { return wake_[static_cast<size_t>(agent)]; }
  /// The agents (bit per agent) of the engine thread running now (0 while none runs). Only
  /// its own thread waits on an agent's wake event, and a running thread waits on nothing:
  /// signals skip notifying them.
  void setRunning(uint32_t agents) { running_ = agents; }

  /// Registers `signals` of instruction `index` that fire `at`, visible to waiters at
  /// `visible` (a compute engine's signals land a SemaphoreBank::handoff() before); `vc` is
  /// the clock they release (ignored without race detection).
  void signal(std::span<const isa::SemSignal> signals, int64_t index, isa::SignalAt at,
              Tick visible, const VectorClock* vc) {
    for (const isa::SemSignal& s : signals) {
      if (s.at != at) continue;
      uint32_t woken = semaphores_.add(s.sem, visible, s.delta, index) & ~running_;
      if (races_ && vc) races_->release(s.sem, visible, s.delta, *vc);
      for (; woken != 0; woken &= woken - 1)
        wake_[static_cast<size_t>(__builtin_ctz(woken))].notify();
    }
  }
  /// Records the first failure and stops the simulation.
  void fail(std::exception_ptr e);
  std::exception_ptr error() const { return error_; }

 private:
  const isa::Program& program_;
  const MachineConfig& machine_;
  isa::MemoryState* memory_;
  SemaphoreBank semaphores_;
  std::unique_ptr<RaceDetector> races_;
  PortArbiter arbiter_;
  RunRecorder recorder_;
  DmaModule* dma_ = nullptr;
  std::array<sc_core::sc_event, kNumAgents> wake_;
  uint32_t running_ = 0;
  std::exception_ptr error_;
};

}  // namespace neuronsim::sim
