// conv3d_transpose's out_layout slabs: bit-exact on odd shapes and both presets, contiguous
// HBM ranges for x and the outputs, and auto's choice per machine.
#include <doctest/doctest.h>

#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_transpose_phases.h"
#include "kernels/conv/conv_transpose_slabs.h"
#include "kernels/harness/run_kernel.h"
#include "sim/dma/dma_plan.h"
#include "sim/simulator.h"
#include "test_conv_check.h"

namespace neuronsim::kernels {
namespace {

using isa::Dtype;
using testing::ConvCase;

ShapeMap shapesOf(const ConvCase& c) {
  ShapeMap shapes{{"x_in", c.x}, {"filters", c.filters}};
  if (c.bias > 0) shapes["bias"] = {c.bias};
  return shapes;
}

PhasePlan planOf(const ConvCase& c, const isa::Geometry& geometry) {
  const ParamValues params = parseParams(conv3dTransposeSpec(), c.params);
  return planPhases(conv3dTransposeCore(shapesOf(c), params), c.dtype, geometry,
                    convOptions(params), phaseOptions(params));
}

/// DMAs of `c`'s program whose HBM side is x_in or out, and how many of them are one range.
std::pair<int, int> contiguousXAndOut(const ConvCase& c, const sim::MachineConfig& machine) {
  const KernelSpec spec = conv3dTransposeSpec();
  const ParamValues params = parseParams(spec, c.params);
  const KernelShapes shapes = checkShapes(spec, shapesOf(c), params);
  const isa::Program program = buildKernel(spec, params, shapes, c.dtype, machine.geometry);
  int total = 0, contiguous = 0;
  for (const isa::Instruction& inst : program.instructions) {
    if (inst.opcode != isa::Opcode::DmaCopy) continue;
    for (const isa::AccessPattern* ap : {&inst.dst, &inst.srcs.at(0)}) {
      if (ap->space != isa::Space::Hbm) continue;
      const std::string& name = program.tensors.at(static_cast<size_t>(ap->tensor)).name;
      if (name != "x_in" && name != "out") continue;
      ++total;
      contiguous += sim::hbmContiguous(*ap) ? 1 : 0;
    }
  }
  return {total, contiguous};
}

const ConvCase kBench{{1, 128, 8, 16, 16}, {2, 2, 2, 128, 64}, 0, {{"stride", "2"}}, Dtype::Bf16};

ConvCase with(ConvCase c, const std::string& layout) {
  c.params.push_back({"out_layout", layout});
  return c;
}

TEST_CASE("conv3d_transpose: out_layout slabs stores each channel's outputs as one range") {
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  // Benchmark: C_out 64 in 2 depth splits (partition co * 2 + h), one x load, one store.
  const PhasePlan slabs = planOf(with(kBench, "slabs"), trn1.geometry);
  CHECK(slabs.splits == 2);
  CHECK(slabs.loads.size() == 1);
  CHECK(slabs.stores.size() == 1);
  CHECK(slabs.stores[0].span.nd == 4);
  const auto [total, contiguous] = contiguousXAndOut(with(kBench, "slabs"), trn1);
  CHECK(total == 2);
  CHECK(contiguous == 2);
  // The phase layout stores alternate output depths: none of its stores is one range.
  const auto [phaseTotal, phaseContiguous] = contiguousXAndOut(with(kBench, "phases"), trn1);
  CHECK(phaseTotal > 2);
  CHECK(phaseContiguous == 0);
  CHECK(planOf(with(kBench, "phases"), trn1.geometry).splits == 0);
  // Splits: the largest divisor of D with splits x C_out <= 128.
  const ParamValues params = parseParams(conv3dTransposeSpec(), kBench.params);
  ConvCore core = conv3dTransposeCore(shapesOf(kBench), params);
  CHECK(slabSplits(core, trn1.geometry) == 2);
  core.cout = 20;
  CHECK(slabSplits(core, trn1.geometry) == 4);
  core.in[0] = 7;
  CHECK(slabSplits(core, trn1.geometry) == 1);
  core.cout = 200;
  core.in[0] = 6;
  CHECK(slabSplits(core, trn1.geometry) == 1);
  // Too large for half a partition (256 KiB of outputs per partition): the phase layout.
  ConvCase big = with(kBench, "slabs");
  big.x = {1, 128, 16, 32, 32};
  big.filters = {2, 2, 2, 128, 128};
  CHECK(planOf(big, trn1.geometry).splits == 0);
}

TEST_CASE("conv3d_transpose: auto takes slabs where strided HBM rows cost") {
  // trn1 charges strided rows at 0.26 of its HBM share: the benchmark's phase stores would take
  // about 20 us alone, slabs 28.0 -> 20.6 us measured. trn2 charges nothing: phases.
  const sim::MachineConfig trn1 = sim::loadMachine("trn1");
  CHECK(planOf(kBench, trn1.geometry).splits == 2);
  CHECK(planOf(kBench, testing::trn2().geometry).splits == 0);
  CHECK(planOf(kBench, isa::Geometry{}).splits == 0);
  CHECK(
      planOf(kBench, sim::loadMachine("trn1", {"dma_strided_hbm_efficiency=1"}).geometry).splits ==
      0);
  const double phases = testing::checkConvCase(conv3dTransposeSpec(), with(kBench, "phases"), trn1);
  const double slabs = testing::checkConvCase(conv3dTransposeSpec(), kBench, trn1);
  CHECK(slabs < 0.8 * phases);
}

TEST_CASE("conv3d_transpose: out_layout slabs is bit-exact") {
  const std::vector<ConvCase> cases = {
      // 6 splits of C_out 20 (120 partitions), bias, odd H and W, flipped taps
      {{1, 5, 6, 3, 5},
       {2, 2, 2, 5, 20},
       20,
       {{"stride", "2"}, {"flip_filter_taps_in_kernel", "true"}}},
      // D 7 (prime): one split, C_in 130 (two tiles), batch 2, relu, bf16
      {{2, 130, 7, 2, 3},
       {2, 2, 2, 130, 40},
       40,
       {{"stride", "2"}, {"activation_fn", "relu"}},
       Dtype::Bf16},
      // C_out 150: two C_out tiles of one split each, stride 3, bias, gelu
      {{1, 4, 2, 3, 2}, {3, 3, 3, 4, 150}, 150, {{"stride", "3"}, {"activation_fn", "gelu"}}},
      // planes wider than a block (rows of a plane per block), 2 splits, evictions on VectorE
      {{1, 3, 2, 12, 50}, {2, 2, 2, 3, 7}, 7, {{"stride", "2"}, {"evict_engine", "vector"}}},
      // Kd 1, non-cubic strides, 4 splits of C_out 30
      {{1, 6, 4, 3, 4}, {1, 3, 2, 6, 30}, 0, {{"stride", "1,3,2"}}, Dtype::Bf16},
  };
  for (const ConvCase& c : cases) {
    const ConvCase s = with(c, "slabs");
    for (const char* machine : {"trn1", "trn2"}) {
      CAPTURE(machine);
      const sim::MachineConfig m = sim::loadMachine(machine);
      CHECK(
          planOf(s, m.geometry).splits ==
          slabSplits(conv3dTransposeCore(shapesOf(s), parseParams(conv3dTransposeSpec(), s.params)),
                     m.geometry));
      testing::checkConvCase(conv3dTransposeSpec(), s, m);
    }
  }
  // Tiles and splits from the machine: 64 partitions, or a 64x64 PE array on 128 (C_out 20:
  // 3 splits of 2 planes; C_in 130 and C_out 40 in three and one tiles).
  const sim::MachineConfig half = testing::trn2Half();
  const sim::MachineConfig pe64 = sim::loadMachine("trn2", {"pe_rows=64", "pe_cols=64"});
  for (const sim::MachineConfig* m : {&half, &pe64})
    for (size_t i = 0; i < 2; ++i) {
      const ConvCase s = with(cases[i], "slabs");
      CHECK(planOf(s, m->geometry).splits > 0);
      testing::checkConvCase(conv3dTransposeSpec(), s, *m);
    }
}

}  // namespace
}  // namespace neuronsim::kernels
