// The NC-v2 SBUF/PSUM port conflict rules.
#include "sim/core/access_arbiter.h"

#include <algorithm>

namespace neuronsim::sim {
namespace {
using isa::Engine;
constexpr size_t at(Engine e) {
  return static_cast<size_t>(e);
}
}  // namespace

traces::Tick AccessArbiter::freeAt(Engine engine, bool sbuf, bool psum) const {
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

void AccessArbiter::claim(Engine engine, bool sbuf, bool psum, traces::Tick until) {
  if (!enabled_) return;
  if (sbuf) sbufUntil_[at(engine)] = until;
  if (psum) psumUntil_[at(engine)] = until;
}

}  // namespace neuronsim::sim
