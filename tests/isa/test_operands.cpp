// The shared meaning of an instruction's operands: slot order, names, spans, boxes, shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "isa/error.h"
#include "isa/footprint.h"
#include "isa/operands.h"
#include "isa/size_limits.h"
#include "operand_builders.h"

using namespace neuronsim::isa;
using namespace neuronsim::isa::test;

namespace {

struct Seen {
  const AccessPattern* ap;
  int slot;
  bool write;
};

std::vector<Seen> operandsOf(const Instruction& inst) {
  std::vector<Seen> seen;
  forEachOperand(inst, [&](const AccessPattern& ap, int slot, bool write) {
    seen.push_back({&ap, slot, write});
  });
  return seen;
}

}  // namespace

TEST_CASE("operands: every operand once, in slot order, with its direction and name") {
  Instruction inst;
  inst.opcode = Opcode::Activation;
  inst.dst = sb(0, 4, 0, {{1, 8}});
  inst.srcs = {sb(0, 4, 64, {{1, 8}}), sb(0, 4, 128, {{1, 8}})};
  inst.bias = sb(0, 4, 256, {});
  inst.reduceDst = sb(0, 4, 260, {});
  inst.operand1.vec = sb(0, 4, 264, {});
  inst.scale.vec = sb(0, 4, 268, {});
  const std::vector<Seen> seen = operandsOf(inst);
  REQUIRE(seen.size() == 7);  // operand0 absent
  const std::vector<int> slots{0, 1, 2, 3, 4, 6, 7};
  const std::vector<bool> writes{true, false, false, false, true, false, false};
  const std::vector<std::string> names{"dst",        "srcs[0]",  "srcs[1]", "bias",
                                       "reduce_dst", "operand1", "scale"};
  for (size_t i = 0; i < seen.size(); ++i) {
    CAPTURE(i);
    CHECK(seen[i].slot == slots[i]);
    CHECK(seen[i].write == writes[i]);
    CHECK(operandAt(inst, seen[i].slot) == seen[i].ap);
    CHECK(operandName(inst, seen[i].slot) == names[i]);
  }
  CHECK(operandAt(inst, 5) == nullptr);  // operand0
  CHECK(operandAt(inst, 8) == nullptr);
  CHECK(operandAt(inst, -1) == nullptr);
  CHECK(operandName(inst, 5) == "operand0");
}

TEST_CASE("footprint: element spans follow negative steps, single-element dims and HBM rows") {
  const std::vector<Dim> dims{{-3, 4}, {5, 2}, {7, 1}};
  const ElementSpan s = dimsSpan(dims);
  CHECK(s.lo == -9);
  CHECK(s.hi == 5);
  const AccessPattern h = hbmView(0, 3, -100, 400, {{2, 6}});
  const ElementSpan e = elementSpan(h);
  CHECK(e.lo == -200);
  CHECK(e.hi == 10);
  const ElementSpan huge = dimsSpan(std::vector<Dim>{{int64_t{1} << 40, int64_t{1} << 40}});
  CHECK(huge.hi == INT64_MAX);  // saturates instead of overflowing
}

TEST_CASE("footprint: byte boxes on chip and in HBM, and their overlap") {
  const AccessPattern a = sb(32, 16, 100, {{-2, 3}, {1, 4}}, Dtype::Bf16);
  const Footprint fa = footprintOf(a);
  CHECK(fa.space == Space::Sbuf);
  CHECK(fa.tensor == -1);
  CHECK(fa.partBegin == 32);
  CHECK(fa.partEnd == 48);
  CHECK(fa.byteBegin == 100 - 4 * 2);
  CHECK(fa.byteEnd == 100 + 4 * 2);
  const Footprint fb = footprintOf(sb(47, 1, 107, {}, Dtype::Bf16));
  CHECK(boxesOverlap(fa, fb));
  CHECK_FALSE(boxesOverlap(fa, footprintOf(sb(48, 1, 100, {}, Dtype::Bf16))));
  CHECK_FALSE(boxesOverlap(fa, footprintOf(sb(32, 1, 108, {}, Dtype::Bf16))));
  CHECK_FALSE(boxesOverlap(fa, footprintOf(ps(32, 16, 100, {}, Dtype::Bf16))));

  const AccessPattern h = hbmView(2, 4, 10, 5, {{1, 3}});  // elements 5..37
  const Footprint fh = footprintOf(h);
  CHECK(fh.tensor == 2);
  CHECK(fh.partBegin == 0);
  CHECK(fh.partEnd == 1);
  CHECK(fh.byteBegin == 5 * 4);
  CHECK(fh.byteEnd == 38 * 4);
  CHECK(boxesOverlap(fh, footprintOf(hbmView(2, 1, 0, 37, {}))));
  CHECK_FALSE(boxesOverlap(fh, footprintOf(hbmView(2, 1, 0, 38, {}))));
  CHECK_FALSE(boxesOverlap(fh, footprintOf(hbmView(1, 1, 0, 37, {}))));
}

TEST_CASE("footprint: byte boxes are exact up to the int64 limits and saturate past them") {
  constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  const Footprint fits = footprintOf(sb(0, 1, kMax - 10, {{1, 4}}, Dtype::Bf16));
  CHECK(fits.byteBegin == kMax - 10);
  CHECK(fits.byteEnd == kMax - 2);
  const Footprint past = footprintOf(sb(0, 1, kMax - 10, {{1, 8}}, Dtype::Bf16));
  CHECK(past.byteBegin == kMax - 10);
  CHECK(past.byteEnd == kMax);
  const Footprint below = footprintOf(sb(0, 1, kMin + 4, {{-1, 4}}, Dtype::Bf16));
  CHECK(below.byteBegin == kMin);
  CHECK(below.byteEnd == kMin + 6);
  const Footprint hbm = footprintOf(hbmView(0, 1, 0, kMax / 4, {{1, 2}}));
  CHECK(hbm.byteBegin == kMax / 4 * 4);
  CHECK(hbm.byteEnd == kMax);
  const Footprint steps = footprintOf(sb(0, 1, 0, {{kMax / 2, 3}}, Dtype::Uint8));
  CHECK(steps.byteBegin == 0);
  CHECK(steps.byteEnd == kMax);
}

TEST_CASE("ceilDiv and floorDiv round toward +/- infinity for either sign") {
  for (int64_t b : {1, 2, 3, 7}) {
    for (int64_t a = -20; a <= 20; ++a) {
      CAPTURE(a);
      CAPTURE(b);
      const double q = static_cast<double>(a) / static_cast<double>(b);
      CHECK(ceilDiv(a, b) == static_cast<int64_t>(std::ceil(q)));
      CHECK(floorDiv(a, b) == static_cast<int64_t>(std::floor(q)));
    }
  }
}

TEST_CASE("shape text: formatting and parsing round trip, bad text refused") {
  CHECK(shapeString(std::vector<int64_t>{4, 8, 16}) == "[4,8,16]");
  CHECK(shapeString(std::vector<int64_t>{}) == "[]");
  CHECK(parseShape("4x8x16", "s") == std::vector<int64_t>{4, 8, 16});
  CHECK(parseShape("4X8,16", "s") == std::vector<int64_t>{4, 8, 16});
  CHECK(parseShape("7", "s") == std::vector<int64_t>{7});
  for (const char* bad : {"", "4x", "x4", "4x0", "-4", "+4", "4xx8", "4x8.5", "4 x8", "abc",
                          "99999999999999999999", "1x1x1x1x1x1x1x1x1", "100000x100000x1000"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parseShape(bad, "s"), neuronsim::Error);
  }
  try {
    parseShape("4x", "run: --shape x");
    FAIL("no error");
  } catch (const neuronsim::Error& e) {
    CHECK(std::string(e.what()).starts_with("run: --shape x: shape '4x'"));
  }
}
