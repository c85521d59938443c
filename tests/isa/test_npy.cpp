// .npy reading and writing: round trip, v1/v2 headers, float64/float16, and each error.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "isa/error.h"
#include "isa/npy.h"

using namespace neuronsim::isa;
namespace fs = std::filesystem;

namespace {

/// A fresh directory for one test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("neuronsim_npy_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// Writes an .npy file by hand: version, the header dict text (padded to 64), then data bytes.
void writeRaw(const std::string& path, int major, std::string header, const std::string& data) {
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  const auto len = static_cast<uint32_t>(header.size());
  bytes += static_cast<char>(len & 0xFF);
  bytes += static_cast<char>((len >> 8) & 0xFF);
  if (major != 1) {
    bytes += static_cast<char>((len >> 16) & 0xFF);
    bytes += static_cast<char>(len >> 24);
  }
  std::ofstream(path, std::ios::binary) << bytes << header << data;
}

template <typename T>
std::string rawBytes(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

std::string errorOf(const std::string& path) {
  try {
    readNpy(path);
  } catch (const neuronsim::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("npy write then read gives the same shape and values") {
  TempDir dir;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 3}, {5}, {1, 2, 1, 2}, {}}) {
    NpyArray a;
    a.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    for (int64_t i = 0; i < n; ++i) a.values.push_back(0.5f * static_cast<float>(i) - 1.25f);
    const std::string path = dir.file("a.npy");
    writeNpy(path, a);
    const NpyArray b = readNpy(path);
    CHECK(b.shape == a.shape);
    CHECK(b.values == a.values);
    CHECK(fs::file_size(path) % 64 == static_cast<uintmax_t>(n * 4) % 64);  // header padded to 64
    CHECK_FALSE(fs::exists(path + ".tmp"));
  }
}

TEST_CASE("npy reads a hand-made float32 v1 file in C order") {
  TempDir dir;
  const std::string path = dir.file("f4.npy");
  writeRaw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
           rawBytes<float>({1, 2, 3, 4}));
  const NpyArray a = readNpy(path);
  CHECK(a.shape == std::vector<int64_t>{2, 2});
  CHECK(a.values == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("npy reads float64 (rounded to fp32) and float16, with a v2 header") {
  TempDir dir;
  const std::string f8 = dir.file("f8.npy");
  writeRaw(f8, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
           rawBytes<double>({0.1, -2.0, 1e40}));
  const NpyArray a = readNpy(f8);
  CHECK(a.shape == std::vector<int64_t>{3});
  CHECK(a.values == std::vector<float>{0.1f, -2.0f, INFINITY});
  const std::string f2 = dir.file("f2.npy");
  writeRaw(f2, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 3), }",
           rawBytes<uint16_t>({0x3C00, 0xC000, 0x0001}));
  const NpyArray b = readNpy(f2);
  CHECK(b.shape == std::vector<int64_t>{1, 3});
  CHECK(b.values == std::vector<float>{1.0f, -2.0f, 5.9604644775390625e-8f});
}

TEST_CASE("npy errors name the file and the problem") {
  TempDir dir;
  SUBCASE("missing file") {
    const std::string path = dir.file("missing.npy");
    const std::string e = errorOf(path);
    CHECK(e.find(path) != std::string::npos);
    CHECK(e.find("cannot open") != std::string::npos);
  }
  SUBCASE("bad magic") {
    const std::string path = dir.file("bad.npy");
    std::ofstream(path) << "this is not numpy at all";
    const std::string e = errorOf(path);
    CHECK(e.find(path) != std::string::npos);
    CHECK(e.find("magic") != std::string::npos);
  }
  SUBCASE("Fortran order") {
    const std::string path = dir.file("fortran.npy");
    writeRaw(path, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
             rawBytes<float>({1, 2, 3, 4}));
    CHECK(errorOf(path).find("Fortran") != std::string::npos);
  }
  SUBCASE("unsupported dtypes") {
    const std::string i4 = dir.file("i4.npy");
    writeRaw(i4, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
             rawBytes<int32_t>({1}));
    CHECK(errorOf(i4).find("unsupported dtype '<i4'") != std::string::npos);
    const std::string be = dir.file("be.npy");
    writeRaw(be, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
             rawBytes<float>({1}));
    CHECK(errorOf(be).find("unsupported dtype '>f4'") != std::string::npos);
  }
  SUBCASE("truncated data") {
    const std::string path = dir.file("short.npy");
    writeRaw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
             rawBytes<float>({1, 2, 3}));
    const std::string e = errorOf(path);
    CHECK(e.find(path) != std::string::npos);
    CHECK(e.find("truncated") != std::string::npos);
  }
  SUBCASE("shape does not match the data") {
    const std::string path = dir.file("long.npy");
    writeRaw(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
             rawBytes<float>({1, 2, 3}));
    CHECK(errorOf(path).find("does not match") != std::string::npos);
  }
  SUBCASE("truncated header") {
    const std::string path = dir.file("header.npy");
    std::ofstream(path, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    CHECK(errorOf(path).find("truncated") != std::string::npos);
  }
}

TEST_CASE("writeNpy rejects a shape that does not match the values and leaves nothing behind") {
  TempDir dir;
  const std::string path = dir.file("x.npy");
  NpyArray a{{2, 2}, {1, 2, 3}};
  CHECK_THROWS_AS(writeNpy(path, a), neuronsim::Error);
  CHECK_FALSE(fs::exists(path));
  CHECK_THROWS_AS(writeNpy(dir.file("no/such/dir/x.npy"), NpyArray{{1}, {1}}), neuronsim::Error);
}
