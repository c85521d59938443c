// dx through the conv core, and db as per-partition Vector reductions of dy chunks.
#include "kernels/conv/conv_bwd_build.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "isa/size_limits.h"
#include "kernels/builder/pipeline.h"
#include "kernels/conv/conv_build.h"

namespace neuronsim::kernels {

namespace {

constexpr int64_t kDbChunk = 8192;  // dy elements per partition per load

}  // namespace

void buildConvDx(KernelBuilder& builder, const ConvCore& forward, isa::Dtype dtype,
                 const HbmView& dy, const HbmView& filters, const HbmView& dx,
                 const ConvOptions& options) {
  buildConv(builder, dxCore(forward), dtype, dy, filters, std::nullopt, dx, options);
}

ConvOptions dxOptions(const ParamValues& params) {
  ConvOptions options;
  options.chunkPositions = params.getInt("dx_chunk_positions");
  options.wPairs = params.getString("dx_w_pairs");
  options.stationary = params.getString("dx_stationary");
  return options;
}

std::vector<ParamSpec> dxScheduleParams() {
  std::vector<ParamSpec> dx;
  for (ParamSpec p : convScheduleParams()) {
    if (p.name != "chunk_positions" && p.name != "w_pairs" && p.name != "stationary") continue;
    p.name = fmt::format("dx_{}", p.name);
    p.meaning = fmt::format("dx {}", p.meaning);
    dx.push_back(std::move(p));
  }
  return dx;
}

void buildConvDb(KernelBuilder& b, const HbmView& dy, const HbmView& db) {
  const int64_t batch = dy.size(0), channels = dy.size(1);
  const int64_t positions = dy.size(2) * dy.size(3) * dy.size(4);
  const int64_t chunk = std::min(positions, kDbChunk);
  const int64_t partitions = b.geometry().partitions;
  const int64_t tiles = isa::ceilDiv(channels, partitions);
  const int64_t parts = std::min(channels, partitions);
  BufferRing ring = BufferRing::sbuf(b, 2, {parts, chunk}, dy.dtype(), "db_in");
  const Tile acc = b.sbuf({parts, tiles}, isa::Dtype::Fp32, "db_acc");
  const Tile part = b.sbuf({parts, 1}, isa::Dtype::Fp32, "db_part");
  for (int64_t j = 0; j < tiles; ++j) {
    const int64_t c0 = j * partitions, cw = std::min(partitions, channels - c0);
    const int32_t p = static_cast<int32_t>(cw);
    const Tile sum = acc.partitionSlice(0, p).slice(0, j, j + 1);
    bool first = true;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
        const int64_t count = std::min(chunk, positions - p0);
        const Tile in = ring.next().partitionSlice(0, p).slice(0, 0, count);
        b.setNote("db load dy");
        b.dmaCopy(in, dy.select(0, n).slice(0, c0, c0 + cw).merge(1, 3).slice(1, p0, p0 + count));
        b.setNote("db reduce");
        b.tensorReduce(first ? sum : part.partitionSlice(0, p), in, isa::AluOp::Add);
        if (!first) b.tensorTensor(sum, sum, part.partitionSlice(0, p), isa::AluOp::Add);
        first = false;
      }
    b.setNote("db store");
    b.dmaCopy(db.slice(0, c0, c0 + cw).reshape({cw, 1}), sum);
  }
  ring.release(b);
  b.release(acc);
  b.release(part);
}

}  // namespace neuronsim::kernels
