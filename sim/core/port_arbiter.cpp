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

PortArbiter::PortArbiter(bool accessConflicts, bool psumBankConflicts)
    : wholePsum_(accessConflicts) {
  if (accessConflicts) {
    sbufRivals_[at(Engine::Vector)] = bit(Engine::GpSimd);
    sbufRivals_[at(Engine::GpSimd)] = bit(Engine::Vector);
  }
  if (accessConflicts || psumBankConflicts) {
    psumRivals_[at(Engine::Vector)] = bit(Engine::Scalar);
    psumRivals_[at(Engine::Scalar)] = bit(Engine::Vector);
  }
}

}  // namespace neuronsim::sim
