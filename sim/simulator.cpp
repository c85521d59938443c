// Placeholder until the timed model lands.
#include "sim/simulator.h"

#include "isa/error.h"

namespace neuronsim::sim {

SimResult simulate(const isa::Program&, const MachineConfig&, isa::MemoryState*, const SimOptions&) {
  throw Error("the timed model is not built yet");
}

MachineConfig loadMachine(const std::string& nameOrPath, const std::vector<std::string>&) {
  MachineConfig config;
  config.name = nameOrPath;
  return config;
}

}  // namespace neuronsim::sim
