// Buffer rings and sets, DMA queue round robins and engine alternation.

#include "kernels/builder/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace neuronsim::kernels {

QueueCycle QueueCycle::span(int32_t first, int32_t count) {
  std::vector<int32_t> queues;
  for (int32_t q = 0; q < std::max(1, count); ++q) queues.push_back(first + q);
  return QueueCycle(std::move(queues));
}

void copyOn(KernelBuilder& builder, const Tile& dst, const Tile& src, isa::Engine engine) {
  if (engine == isa::Engine::Scalar) {
    builder.activation(dst, src, isa::ActFn::Copy);
  } else {
    builder.tensorCopy(dst, src, engine);
  }
}

isa::Engine PsumEvictor::operator()(const Tile& dst, const Tile& src) {
  const isa::Engine engine = engines_.next();
  copyOn(builder_, dst, src, engine);
  return engine;
}

BufferRing BufferRing::fill(int count, const std::string& name,
                            const std::function<Tile(const std::string&)>& allocate) {
  BufferRing ring;
  for (int i = 0; i < std::max(1, count); ++i)
    ring.tiles_.push_back(allocate(fmt::format("{}_{}", name, i)));
  return ring;
}

BufferRing BufferRing::sbuf(KernelBuilder& builder, int count, const std::vector<int64_t>& shape,
                            isa::Dtype dtype, const std::string& name) {
  return fill(count, name, [&](const std::string& n) { return builder.sbuf(shape, dtype, n); });
}

BufferRing BufferRing::psum(KernelBuilder& builder, int count, const std::vector<int64_t>& shape,
                            isa::Dtype dtype, const std::string& name) {
  return fill(count, name, [&](const std::string& n) { return builder.psum(shape, dtype, n); });
}

void BufferRing::release(KernelBuilder& builder) {
  for (const Tile& t : tiles_) builder.release(t);
  tiles_.clear();
}

void runPipelined(int64_t count, int sets, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& compute) {
  const int64_t ahead = std::max(1, sets) - 1;
  const auto setOf = [sets](int64_t item) { return static_cast<int>(item % std::max(1, sets)); };
  for (int64_t item = 0; item < std::min(ahead, count); ++item) load(item, setOf(item));
  for (int64_t item = 0; item < count; ++item) {
    if (ahead == 0) load(item, setOf(item));
    if (ahead > 0 && item + ahead < count) load(item + ahead, setOf(item + ahead));
    compute(item, setOf(item));
  }
}

}  // namespace neuronsim::kernels
