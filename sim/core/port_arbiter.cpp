// The NC-v2 SBUF/PSUM port conflict rules.
#include "sim/core/port_arbiter.h"

namespace neuronsim::sim {
namespace {
using isa::Engine;
constexpr size_t at(Engine e) {
  return static_cast<size_t>(e);
}
constexpr uint32_t bit(Engine e) {
  return 1u << static_cast<unsigned>(e);
}
}  // namespace

PortArbiter::PortArbiter(bool accessConflicts, bool psumBankConflicts, uint32_t psumEngines)
    : wholePsum_(accessConflicts) {
  if (accessConflicts) {
    sbufRivals_[at(Engine::Vector)] = bit(Engine::GpSimd);
    sbufRivals_[at(Engine::GpSimd)] = bit(Engine::Vector);
  }
  const uint32_t pair = bit(Engine::Vector) | bit(Engine::Scalar);
  if ((accessConflicts || psumBankConflicts) && (psumEngines & pair) == pair) {
    psumRivals_[at(Engine::Vector)] = bit(Engine::Scalar);
    psumRivals_[at(Engine::Scalar)] = bit(Engine::Vector);
  }
}

}  // namespace neuronsim::sim
