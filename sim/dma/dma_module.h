#pragma once
// The SystemC shell of the DMA engines: accepts triggered transfers, runs the fluid model
// and waits once per change, firing read signals at the first byte and completion signals
// when the last part lands.

#include <cstdint>
#include <deque>
#include <span>
#include <systemc>
#include <vector>

#include "sim/core/core_context.h"
#include "sim/core/operand_list.h"
#include "sim/dma/dma_fluid.h"

namespace neuronsim::sim {

/// The 16 DMA engines of one core as one module with one thread.
class DmaModule : public sc_core::sc_module, private DmaListener {
 public:
  SC_HAS_PROCESS(DmaModule);
  DmaModule(sc_core::sc_module_name name, CoreContext& context);

  /// Posts DMA instruction `index`, triggered at `issue` (the SystemC now); it moves data
  /// from its admission + dma_latency_ns. `issuerClock` is the trigger's vector clock and
  /// `operands` the instruction's decoded operands (both read only when races are on).
  void post(int64_t index, Tick issue, const VectorClock* issuerClock,
            std::span<const Operand> operands);
  /// How long triggering DMA instruction `index` holds its issuing engine.
  Tick triggerTime(int64_t index) const;

 private:
  /// What the shell remembers of one posted transfer (its fluid tag is its position).
  struct Transfer {
    int64_t index = -1;
    int32_t queue = 0;
    Tick issue;
    Tick start;
    int64_t bytes = 0;
    int64_t hbmBytes = 0;
    int32_t descriptors = 0;
    int32_t engines = 0;
    bool landed = false;
    VectorClock clock{};
  };

  /// The plan of DMA instruction `index` (the trigger and the post of one DMA share it; the
  /// post moves it into the fluid model).
  const DmaPlan& planOf(int64_t index) const;
  void run();
  void transferStarted(int64_t tag, Picos ps) override;
  void transferFinished(int64_t tag, Picos ps) override;
  void sampleCounters();
  /// Signals completion of the landed transfers at the head of `queue`, in posting order.
  void signalLandedInOrder(int32_t queue, Tick at);

  CoreContext& ctx_;
  DmaFluid fluid_;
  std::vector<Transfer> transfers_;
  /// Per queue, transfers posted and not yet signalled: a queue's completion semaphore counts
  /// transfers in posting order, so a transfer that lands early waits for its predecessors.
  std::vector<std::deque<int64_t>> unsignalled_;
  mutable int64_t plannedIndex_ = -1;
  mutable DmaPlan planned_;
  sc_core::sc_event wake_;
  double lastGbps_ = -1;
  int32_t lastPending_ = -1;
};

}  // namespace neuronsim::sim
