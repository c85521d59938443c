// Program identity and the check for forced schedule parameters that change nothing: notes do
// not count, the forced program is the caller's (never built again), every other value is built.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "kernels/harness/program_identity.h"
#include "kernels/harness/run_kernel.h"
#include "kernels/harness/schedule_effect.h"

using namespace neuronsim::kernels;
using neuronsim::isa::Dtype;
using neuronsim::isa::Engine;

namespace {

/// `tile` only writes a note; `engine` picks the engine of the one memset; counts its builds.
KernelSpec toySpec(int& builds) {
  KernelSpec spec;
  spec.name = "toy";
  spec.params = {
      scheduleParam("tile", ParamType::Int, "note only", {"64", "128"}),
      scheduleParam("engine", ParamType::Enum, "memset engine", {}, {"vector", "gpsimd"})};
  spec.inferShapes = [](const ShapeMap&, const ParamValues&) { return ShapeMap{}; };
  spec.build = [&builds](KernelBuilder& b, const KernelArgs& args) {
    ++builds;
    b.setNote(fmt::format("tile {}", args.params.intOr("tile", 32)));
    const Tile t = b.sbuf({128, 64}, Dtype::Fp32);
    const bool gpsimd = args.params.has("engine") && args.params.getString("engine") == "gpsimd";
    b.memset(t, 0.0f, gpsimd ? Engine::GpSimd : Engine::Vector);
  };
  return spec;
}

}  // namespace

TEST_CASE("program identity: notes aside, the fingerprint tells programs apart as sameProgram") {
  int builds = 0;
  const KernelSpec spec = toySpec(builds);
  const KernelShapes shapes;
  const neuronsim::isa::Geometry geometry;
  const auto build = [&](const std::vector<std::pair<std::string, std::string>>& texts) {
    return buildKernel(spec, parseParams(spec, texts), shapes, Dtype::Fp32, geometry);
  };
  const auto plain = build({}), noted = build({{"tile", "64"}}),
             other = build({{"engine", "gpsimd"}});
  REQUIRE(plain.instructions.at(0).note.str() != noted.instructions.at(0).note.str());
  CHECK(sameProgram(plain, noted));
  CHECK(programFingerprint(plain) == programFingerprint(noted));
  CHECK_FALSE(sameProgram(plain, other));
  CHECK(programFingerprint(plain) != programFingerprint(other));
  CHECK(programFingerprint(plain).size() == 16);
}

TEST_CASE("schedule effect: the given program is compared, never built again") {
  int builds = 0;
  const KernelSpec spec = toySpec(builds);
  const KernelShapes shapes;
  const neuronsim::isa::Geometry geometry;
  const std::vector<std::pair<std::string, std::string>> texts = {{"tile", "64"},
                                                                  {"engine", "gpsimd"}};
  const auto program = buildKernel(spec, parseParams(spec, texts), shapes, Dtype::Fp32, geometry);
  builds = 0;
  const auto found =
      ineffectiveScheduleParams(spec, texts, shapes, Dtype::Fp32, geometry, program, true);
  // tile: auto and 128 (2 builds, both the same program); engine: auto differs (1 build).
  CHECK(builds == 3);
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "tile");
  CHECK(ineffectiveText(found[0], false) ==
        "--tile 64 has no effect here (auto and 128 build the same program)");
  // Nothing forced: nothing built.
  builds = 0;
  CHECK(ineffectiveScheduleParams(spec, {{"tile", "auto"}}, shapes, Dtype::Fp32, geometry, program,
                                  true)
            .empty());
  CHECK(builds == 0);
}
