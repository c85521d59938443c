// simulate(): a fresh SystemC kernel per call, one module per engine plus the DMA engines.
#include "sim/simulator.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <systemc>

#include "isa/error.h"
#include "isa/operands.h"
#include "sim/core/asan_fibers.h"
#include "sim/core/core_context.h"
#include "sim/dma/dma_module.h"
#include "sim/engines/engine_module.h"

// libsystemc references sc_main; neuronsim drives the kernel through sc_start() instead.
extern "C" int sc_main(int, char**) {
  return 0;
}

namespace neuronsim::sim {
namespace {

/// Owns one SystemC kernel for the duration of a run and restores the globals after.
class KernelScope {
 public:
  KernelScope() {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    resetAsanFibers();
    context_ = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
    // Keep the CLI's output clean (e.g. "Simulation stopped by user" after an error).
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  }
  ~KernelScope() {
    delete context_;
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  sc_core::sc_simcontext* context_;
};

/// The engines (bit per engine) that may be PSUM rivals (A1, A2).
constexpr uint32_t kPsumRivals = 1u << static_cast<unsigned>(isa::Engine::Vector) |
                                 1u << static_cast<unsigned>(isa::Engine::Scalar);

std::string semaphoreName(const isa::Program& program, int32_t sem) {
  if (sem >= 0 && sem < static_cast<int32_t>(program.semaphores.size()) &&
      !program.semaphores[sem].empty())
    return program.semaphores[sem];
  return fmt::format("#{}", sem);
}

/// One pass over the program: checks what the timed model relies on, splits the
/// instructions into the engines' streams, notes who signals each semaphore and which of
/// VectorE and ScalarE access PSUM (`psumEngines`, bit per engine: the port arbiter's rivals).
std::vector<isa::LargeVector<int64_t>> prepare(const isa::Program& program, SemaphoreUsage& usage,
                                               int32_t dmaQueues, uint32_t& psumEngines) {
  // Unsigned compares: a negative index wraps above every bound.
  const auto semaphores = static_cast<uint64_t>(program.semaphores.size());
  const auto queues = static_cast<uint32_t>(dmaQueues);
  std::vector<isa::LargeVector<int64_t>> streams(isa::kNumEngines);
  // Room for the whole program in each: only the pages a stream fills become resident.
  for (isa::LargeVector<int64_t>& stream : streams) stream.reserve(program.instructions.size());
  const isa::Instruction* const instructions = program.instructions.data();
  const size_t size = program.instructions.size();
  // Prefetch distances: the instruction with its semaphore vectors, then the arrays they point
  // to (whose vectors must be cached by then).
  constexpr size_t kObjectAhead = 32, kArraysAhead = 16;
  for (size_t i = 0; i < size; ++i) {
    if (i + kObjectAhead < size) {
      __builtin_prefetch(&instructions[i + kObjectAhead]);
      __builtin_prefetch(&instructions[i + kObjectAhead].waits);
    }
    if (i + kArraysAhead < size) {
      __builtin_prefetch(instructions[i + kArraysAhead].waits.data());
      __builtin_prefetch(instructions[i + kArraysAhead].signals.data());
    }
    const isa::Instruction& inst = instructions[i];
    for (const isa::SemWait& w : inst.waits)
      if (static_cast<uint64_t>(static_cast<int64_t>(w.sem)) >= semaphores)
        throw Error(fmt::format("instruction {}: waits on semaphore {} but the program declares {}",
                                i, w.sem, semaphores));
    for (const isa::SemSignal& s : inst.signals)
      if (static_cast<uint64_t>(static_cast<int64_t>(s.sem)) >= semaphores)
        throw Error(fmt::format("instruction {}: signals semaphore {} but the program declares {}",
                                i, s.sem, semaphores));
    if (isa::isDma(inst.opcode)) {
      if (static_cast<uint32_t>(inst.dmaQueue) >= queues)
        throw Error(fmt::format("instruction {}: dma queue {} is outside 0..{}", i, inst.dmaQueue,
                                dmaQueues - 1));
      if (inst.srcs.empty()) throw Error(fmt::format("instruction {}: a DMA needs one source", i));
    }
    usage.note(inst);
    const uint32_t engineBit = 1u << static_cast<unsigned>(inst.engine);
    if ((engineBit & kPsumRivals & ~psumEngines) != 0)
      isa::forEachOperand(inst, [&](const isa::AccessPattern& ap, int, bool) {
        if (ap.space == isa::Space::Psum) psumEngines |= engineBit;
      });
    streams[static_cast<size_t>(inst.engine)].push_back(static_cast<int64_t>(i));
  }
  return streams;
}

}  // namespace

SimResult simulate(const isa::Program& program, const MachineConfig& machine,
                   isa::MemoryState* memory, const SimOptions& options) {
  const auto hostStart = std::chrono::steady_clock::now();
  SemaphoreUsage usage(program.semaphores.size());
  uint32_t psumEngines = 0;
  std::vector<isa::LargeVector<int64_t>> streams =
      prepare(program, usage, machine.geometry.dmaQueues, psumEngines);

  SimResult result;
  std::string deadlock;
  {
    KernelScope kernel;
    CoreContext ctx(program, machine, usage, psumEngines, options.timingOnly ? nullptr : memory,
                    options.sink, options.detectRaces);
    std::vector<std::unique_ptr<EngineSequencer>> sequencers;
    auto dma = std::make_unique<DmaModule>("dma", ctx);
    ctx.attachDma(*dma);
    for (int e = 0; e < isa::kNumEngines; ++e)
      sequencers.push_back(std::make_unique<EngineSequencer>(
          ctx, static_cast<isa::Engine>(e), std::move(streams[static_cast<size_t>(e)])));
    const bool together = !options.sink && !ctx.races() && !ctx.memory();
    std::vector<std::unique_ptr<EngineModule>> engines = engineThreads(ctx, sequencers, together);
    result.oneThread = together;
    sc_core::sc_start();
    if (ctx.error()) std::rethrow_exception(ctx.error());

    for (const auto& engine : sequencers) {
      if (engine->finished()) continue;
      const isa::SemWait* w = engine->blockedOn();
      deadlock += deadlock.empty() ? "deadlock: " : "; ";
      deadlock += fmt::format("{} instruction {}", isa::engineName(engine->engine()),
                              engine->headInstruction());
      if (w)
        deadlock +=
            fmt::format(" waits for semaphore {} >= {} (value {})", semaphoreName(program, w->sem),
                        w->value, ctx.semaphores().value(w->sem));
      else
        deadlock += " cannot proceed";
    }
    result.totals = ctx.recorder().finish();
    if (ctx.races()) result.races = ctx.races()->reports();
    engines.clear();
    dma.reset();
  }
  if (!deadlock.empty()) throw Error(deadlock);
  result.totals.hostSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - hostStart).count();
  return result;
}

}  // namespace neuronsim::sim
