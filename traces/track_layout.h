#pragma once
// Which trace track (Chrome thread id) each instruction and DMA transfer is drawn on.

#include <cstdint>
#include <string>
#include <vector>

#include "traces/event.h"

namespace neuronsim::traces {

/// Thread ids: 99 the kernel span (not 0, which Perfetto reserves for the idle thread), 1..5 the
/// engines (isa::Engine + 1), 100+q DMA queue q. Events that overlap an earlier one on the same
/// track go to an extra lane, tid + 1000 * lane, named "<track> #<lane+1>" (Chrome and Perfetto
/// need nested slices).
inline constexpr int kKernelTid = 99;
inline constexpr int kDmaTidBase = 100;
inline constexpr int kLaneTidStride = 1000;

int engineTid(isa::Engine engine);
int queueTid(int32_t queue);
/// Track name of a tid: "kernel", "tensor", ..., "dma.q3", "dma.q3 #2".
std::string trackName(int tid);
/// Display rank of a base track name: engines in ISA order, then DMA queues by number, then others.
int trackRank(const std::string& track);

/// Lanes of a run: one tid per instruction event and per DMA event, in the log's order.
struct TrackLayout {
  std::vector<int> instructionTids;
  std::vector<int> dmaTids;
  std::vector<int> usedTids;  ///< sorted, without the kernel track
};

TrackLayout layoutTracks(const EventLog& log);

}  // namespace neuronsim::traces
