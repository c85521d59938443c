// Buffer rings and sets, DMA queue round robins and engine alternation.

#include "kernels/builder/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/footprint.h"

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
  uint64_t banks = 0;
  if (src.space() == isa::Space::Psum) {
    const isa::Footprint box = isa::footprintOf(src.ap());
    banks = builder_.geometry().psumBankMask(box.byteBegin, box.byteEnd);
  }
  if ((banks & lastBanks_) == 0) last_ = engines_.next();
  lastBanks_ = banks;
  copyOn(builder_, dst, src, last_);
  return last_;
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

Pipeline::Pipeline(int64_t count, int sets, Step load, Step compute)
    : count_(count),
      sets_(std::max(1, sets)),
      load_(std::move(load)),
      compute_(std::move(compute)) {}

void Pipeline::prime() {
  if (primed_) return;
  primed_ = true;
  for (int64_t item = 0; item < std::min<int64_t>(sets_ - 1, count_); ++item)
    load_(item, setOf(item));
}

void Pipeline::emitThrough(int64_t end) {
  if (end > next_) prime();
  const int64_t ahead = sets_ - 1;
  for (; next_ < std::min(end, count_); ++next_) {
    if (ahead == 0) load_(next_, setOf(next_));
    if (ahead > 0 && next_ + ahead < count_) load_(next_ + ahead, setOf(next_ + ahead));
    compute_(next_, setOf(next_));
  }
}

void runPipelined(int64_t count, int sets, const std::function<void(int64_t item, int set)>& load,
                  const std::function<void(int64_t item, int set)>& compute) {
  Pipeline(count, sets, load, compute).emitThrough(count);
}

}  // namespace neuronsim::kernels
