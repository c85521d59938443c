// MemoryState: fresh NaN bytes, the written shadow, bounds, and HBM tensor set/get.
#include <doctest/doctest.h>

#include <cmath>

#include "isa/error.h"
#include "isa/memory_state.h"
#include "test_semantics_fixture.h"

using namespace neuronsim::isa;
using neuronsim::isa::test::smallGeometry;

TEST_CASE("fresh SBUF and PSUM bytes are 0xFF: NaN in every float dtype") {
  Program program;
  MemoryState m(program, smallGeometry());
  for (Space s : {Space::Sbuf, Space::Psum}) {
    const std::byte* p = m.onChip(s, 127, 16);
    CHECK(std::to_integer<int>(p[0]) == 0xFF);
    for (Dtype d : {Dtype::Fp32, Dtype::Bf16, Dtype::Fp16, Dtype::Fp8E4m3, Dtype::Fp8E5m2})
      CHECK(std::isnan(loadElement(d, p)));
    CHECK(loadElement(Dtype::Int32, p) == -1.0f);
    CHECK(loadElement(Dtype::Uint8, p) == 255.0f);
  }
}

TEST_CASE("the written shadow tracks exact byte ranges per partition and space") {
  Program program;
  MemoryState m(program, smallGeometry());
  CHECK_FALSE(m.isWritten(Space::Sbuf, 3, 8, 4));
  m.markWritten(Space::Sbuf, 3, 8, 4);
  CHECK(m.isWritten(Space::Sbuf, 3, 8, 4));
  CHECK(m.isWritten(Space::Sbuf, 3, 9, 2));
  CHECK_FALSE(m.isWritten(Space::Sbuf, 3, 7, 2));   // byte 7 not written
  CHECK_FALSE(m.isWritten(Space::Sbuf, 3, 11, 2));  // byte 12 not written
  CHECK_FALSE(m.isWritten(Space::Sbuf, 2, 8, 4));   // other partition
  CHECK_FALSE(m.isWritten(Space::Sbuf, 4, 8, 4));
  CHECK_FALSE(m.isWritten(Space::Psum, 3, 8, 4));  // other space
  m.markWritten(Space::Psum, 0, 2044, 4);
  CHECK(m.isWritten(Space::Psum, 0, 2044, 4));
}

TEST_CASE("on-chip accesses outside the geometry throw") {
  Program program;
  MemoryState m(program, smallGeometry());
  CHECK_THROWS_AS(m.onChip(Space::Sbuf, 128, 0), neuronsim::Error);
  CHECK_THROWS_AS(m.onChip(Space::Sbuf, -1, 0), neuronsim::Error);
  CHECK_THROWS_AS(m.markWritten(Space::Psum, 0, 2046, 4), neuronsim::Error);
  CHECK_THROWS_AS(m.isWritten(Space::Sbuf, 0, 4095, 2), neuronsim::Error);
  CHECK_THROWS_AS(m.onChip(Space::Hbm, 0, 0), neuronsim::Error);
  CHECK_NOTHROW(m.markWritten(Space::Sbuf, 0, 4092, 4));
}

TEST_CASE("HBM tensors start at zero and convert on set and get") {
  Program program;
  program.tensors = {{"a", {2, 3}, Dtype::Fp32, TensorKind::Input},
                     {"b", {4}, Dtype::Bf16, TensorKind::Output}};
  MemoryState m(program, smallGeometry());
  CHECK(m.hbmTensorCount() == 2);
  CHECK(m.hbm(0).size() == 24);
  CHECK(m.hbm(1).size() == 8);
  CHECK(m.getTensor(0) == std::vector<float>(6, 0.0f));
  m.setTensor(1, {1.0f, 1.00390625f, 1.01171875f, -3.0f});
  // bf16 ties to even: 1+2^-8 -> 1, 1+3*2^-8 -> 1+2^-6.
  CHECK(m.getTensor(1) == std::vector<float>{1.0f, 1.0f, 1.015625f, -3.0f});
  CHECK_THROWS_AS(m.setTensor(0, {1.0f, 2.0f}), neuronsim::Error);
}
