#pragma once
// SBUF and PSUM occupancy counters of a timed run, from the builder's allocations and the run's
// event times.

#include <cstdint>
#include <vector>

#include "kernels/builder/allocation_record.h"
#include "traces/event.h"

namespace neuronsim::kernels {

/// When one allocation held its bytes in simulated time.
struct LiveInterval {
  isa::Space space = isa::Space::Sbuf;
  int64_t bytes = 0;   ///< bytes per partition
  double startNs = 0;  ///< start of the earliest-starting instruction or transfer touching it
  double endNs = 0;    ///< end of the latest-ending one
};

/// One interval per allocation touched by an instruction the log recorded, in allocation order.
/// An instruction's time is the union of its InstructionEvent and, for a DMA, its DmaEvent.
std::vector<LiveInterval> liveIntervals(const std::vector<AllocationRecord>& allocations,
                                        const traces::EventLog& log);

/// Step-function samples of bytes per partition live, SbufBytes then PsumBytes, each starting
/// with a sample at 0 ns and then one per moment its value changes (time ascending).
std::vector<traces::CounterSample> occupancySamples(const std::vector<LiveInterval>& intervals);

/// Appends occupancySamples(liveIntervals(allocations, log)) to log.counters.
void appendOccupancyCounters(traces::EventLog& log,
                             const std::vector<AllocationRecord>& allocations);

}  // namespace neuronsim::kernels
