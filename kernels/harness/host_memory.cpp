// Host memory estimates against /proc/meminfo.
#include "kernels/harness/host_memory.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "isa/dtype.h"
#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::kernels {

std::optional<int64_t> availableHostBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

/// SBUF and PSUM bytes and their written-byte shadows (the simulator's trackers scale alike).
int64_t onChipBytes(const isa::Geometry& g) {
  const auto perPartition = isa::checkedAdd(g.sbufPartitionBytes, g.psumPartitionBytes);
  return isa::checkedMul(2 * g.partitions, perPartition.value_or(kSaturated)).value_or(kSaturated);
}

int64_t elements(const ShapeMap& shapes) {
  int64_t n = 0;
  for (const auto& [name, shape] : shapes) n += shapeElements(shape);
  return n;
}

}  // namespace

std::vector<MemoryItem> kernelRunMemory(const KernelSpec& spec, const KernelShapes& shapes,
                                        isa::Dtype dtype, const isa::Geometry& geometry,
                                        RunMode mode, bool check) {
  if (mode == RunMode::TimingOnly) return {{"SBUF and PSUM", onChipBytes(geometry)}};
  const int64_t in = elements(shapes.inputs), out = elements(shapes.outputs);
  return {{"input values", 4 * in},
          {"HBM tensors",
           in * isa::dtypeBytes(dtype) + out * isa::dtypeBytes(outputDtype(spec, dtype))},
          {"outputs", 4 * out * (check ? 2 : 1)},
          {"SBUF and PSUM", onChipBytes(geometry)}};
}

std::vector<MemoryItem> programRunMemory(const isa::Program& program, const isa::Geometry& geometry,
                                         RunMode mode) {
  int64_t inputs = 0, outputs = 0, hbm = 0;
  for (const isa::TensorDecl& t : program.tensors) {
    const int64_t n = isa::checkedElements(t.shape, fmt::format("tensor '{}'", t.name), true);
    hbm += n * isa::dtypeBytes(t.dtype);
    if (t.kind == isa::TensorKind::Input) inputs += 4 * n;
    if (t.kind == isa::TensorKind::Output) outputs += 4 * n;
  }
  if (mode == RunMode::TimingOnly) return {{"SBUF and PSUM", onChipBytes(geometry)}};
  return {{"input values", inputs},
          {"HBM tensors", hbm},
          {"outputs", outputs},
          {"SBUF and PSUM", onChipBytes(geometry)}};
}

void checkHostMemory(const std::string& who, const std::vector<MemoryItem>& items) {
  const std::optional<int64_t> available = availableHostBytes();
  if (!available) return;
  int64_t total = 0;
  std::vector<std::string> parts;
  for (const MemoryItem& item : items) {
    total = isa::checkedAdd(total, item.bytes).value_or(kSaturated);
    if (item.bytes > 0)
      parts.push_back(fmt::format("{} {}", item.what, isa::byteString(item.bytes)));
  }
  if (total <= *available) return;
  throw Error(fmt::format("{}: needs about {} of host memory ({}) but {} is available", who,
                          isa::byteString(total), fmt::join(parts, ", "),
                          isa::byteString(*available)));
}

}  // namespace neuronsim::kernels
