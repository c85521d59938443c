// The NC-v2 SBUF/PSUM port conflict rules.
#include "sim/core/port_arbiter.h"

#include <algorithm>

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

uint32_t PortArbiter::rivals(Engine engine, bool sbuf, bool psum) const {
  if (!enabled_) return 0;
  uint32_t r = 0;
  if (sbuf) {
    if (engine == Engine::Vector) r |= bit(Engine::GpSimd);
    if (engine == Engine::GpSimd) r |= bit(Engine::Vector);
  }
  if (psum) {
    if (engine == Engine::Vector) r |= bit(Engine::Scalar);
    if (engine == Engine::Scalar) r |= bit(Engine::Vector);
  }
  return r;
}

traces::Tick PortArbiter::freeAt(Engine engine, bool sbuf, bool psum) const {
  if (!enabled_) return {};
  traces::Tick t;
  if (sbuf) {
    if (engine == Engine::Vector) t = std::max(t, sbufUntil_[at(Engine::GpSimd)]);
    if (engine == Engine::GpSimd) t = std::max(t, sbufUntil_[at(Engine::Vector)]);
  }
  if (psum) {
    if (engine == Engine::Vector) t = std::max(t, psumUntil_[at(Engine::Scalar)]);
    if (engine == Engine::Scalar) t = std::max(t, psumUntil_[at(Engine::Vector)]);
  }
  return t;
}

void PortArbiter::claim(Engine engine, bool sbuf, bool psum, traces::Tick until) {
  if (!enabled_) return;
  next_[at(engine)].waiting = false;
  if (sbuf) sbufUntil_[at(engine)] = until;
  if (psum) psumUntil_[at(engine)] = until;
}

}  // namespace neuronsim::sim
