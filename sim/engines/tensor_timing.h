#pragma once
// TensorE timing: matmul and transpose issue, LoadStationary hidden behind the previous
// matmul when the stationary changes (P1), and the Trn2 throttle (R2): a throttled
// instruction is held back at the head of the stream and then runs at full rate, so a
// throttled stretch shows as Throttle stalls between full-rate spans.

#include "sim/cost/pe_throttle.h"
#include "sim/engines/engine_timing.h"

namespace neuronsim::sim {

class TensorTiming : public EngineTiming {
 public:
  explicit TensorTiming(const MachineConfig& machine);

  /// EngineTiming::issue() with LoadStationary and the throttle.
  Issue issue(const DecodedInstruction& inst, const Footprint& dst, Tick start, const Stall& stall);

 private:
  PeThrottle throttle_;
  Tick lastMultiply_ = Tick::fromPs(-1);  ///< when the previous PE instruction began multiplying
};

}  // namespace neuronsim::sim
