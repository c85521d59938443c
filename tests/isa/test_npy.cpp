// .npy reading and writing: round trip, v1/v2 headers, float64/float16, files from and for numpy,
// streams, size bounds, and each error.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
    path = fs::temp_directory_path() / fmt::format("neuronsim_npy_{}_{}", getpid(), counter++);
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

namespace {

/// Runs Debian's python3 (with numpy) on `script` with `dir` as sys.argv[1]; its exit status.
int python(const std::string& script, const std::string& dir) {
  const std::string path = dir + "/script.py";
  std::ofstream(path) << "import sys\nimport numpy as np\nd = sys.argv[1]\n" << script;
  return std::system(("/usr/bin/python3 " + path + " " + dir).c_str());
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.5f * static_cast<float>(i) - 3.0f;
  return v;
}

}  // namespace

TEST_CASE("npy reads what numpy.save writes: float16/32/64, 0-d to 4-d, an empty axis") {
  TempDir dir;
  REQUIRE(python("for t in ('f2', 'f4', 'f8'):\n"
                 "    for s in ((), (5,), (3, 4), (2, 3, 1, 2), (0, 3)):\n"
                 "        n = int(np.prod(s))\n"
                 "        np.save('%s/%s_%s.npy' % (d, t, 'x'.join(map(str, s)) or 'scalar'),\n"
                 "                (np.arange(n) * 0.5 - 3).astype(t).reshape(s))\n",
                 dir.path.string()) == 0);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"scalar", {}}, {"5", {5}}, {"3x4", {3, 4}}, {"2x3x1x2", {2, 3, 1, 2}}, {"0x3", {0, 3}}};
  for (const char* type : {"f2", "f4", "f8"}) {
    for (const auto& [name, shape] : shapes) {
      CAPTURE(type);
      CAPTURE(name);
      const NpyArray a = readNpy(dir.file(std::string(type) + "_" + name + ".npy"));
      CHECK(a.shape == shape);
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      CHECK(a.values == ramp(static_cast<size_t>(n)));  // every value is exact in float16
      CHECK(readNpyHeader(dir.file(std::string(type) + "_" + name + ".npy")).elements == n);
    }
  }
}

TEST_CASE("numpy.load reads what writeNpy writes") {
  TempDir dir;
  writeNpy(dir.file("w.npy"), NpyArray{{2, 3, 4}, ramp(24)});
  writeNpy(dir.file("s.npy"), NpyArray{{}, {7.5f}});
  CHECK(python("a = np.load(d + '/w.npy')\n"
               "assert a.dtype == np.float32 and a.shape == (2, 3, 4), (a.dtype, a.shape)\n"
               "assert (a.ravel() == np.arange(24) * 0.5 - 3).all()\n"
               "s = np.load(d + '/s.npy')\n"
               "assert s.shape == () and s == 7.5\n",
               dir.path.string()) == 0);
}

TEST_CASE("npy sizes are bounded before anything as large as the data is allocated") {
  TempDir dir;
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  SUBCASE("a shape of (4, 2^62 + 1) over 16 bytes") {
    writeRaw(dir.file("h.npy"), 1, f4 + "(4, 4611686018427387905), }", std::string(16, '\0'));
    CHECK(errorOf(dir.file("h.npy")).find("extent over the limit of 4294967296") !=
          std::string::npos);
  }
  SUBCASE("a product over the element limit") {
    writeRaw(dir.file("p.npy"), 1, f4 + "(70000, 70000), }", std::string(16, '\0'));
    CHECK(errorOf(dir.file("p.npy")).find("4900000000 elements, over the limit") !=
          std::string::npos);
  }
  SUBCASE("more than 8 axes") {
    writeRaw(dir.file("r.npy"), 1, f4 + "(1, 1, 1, 1, 1, 1, 1, 1, 1), }", std::string(4, '\0'));
    CHECK(errorOf(dir.file("r.npy")).find("more than 8 axes") != std::string::npos);
  }
  SUBCASE("a header length of 2^31") {
    std::ofstream(dir.file("l.npy"), std::ios::binary)
        << std::string("\x93NUMPY\x02\x00\x00\x00\x00\x80{", 13);
    CHECK(errorOf(dir.file("l.npy"))
              .find("npy header of 2147483648 bytes, over the limit of 65536") !=
          std::string::npos);
  }
  SUBCASE("a device: magic checked first, nothing more read") {
    CHECK(errorOf("/dev/zero").find("bad magic") != std::string::npos);
  }
}

TEST_CASE("npy header dicts are parsed, not searched") {
  TempDir dir;
  auto error = [&](const std::string& header) {
    writeRaw(dir.file("x.npy"), 1, header, rawBytes<float>({1, 2}));
    return errorOf(dir.file("x.npy"));
  };
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,)}")
            .find("repeated key 'shape'") != std::string::npos);
  CHECK(
      error("{'descr': '<f4', 'shape': (2,), }").find("no 'descr', 'fortran_order' and 'shape'") !=
      std::string::npos);
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk")
            .find("text after the dict") != std::string::npos);
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")
            .find("not a non-negative integer") != std::string::npos);
  CHECK(error("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }")
            .find("not True or False") != std::string::npos);
  CHECK(error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }").empty());
  writeRaw(dir.file("v.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
           rawBytes<float>({1, 2}));
  std::string bytes;
  {
    std::ifstream in(dir.file("v.npy"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[6] = 4;
  std::ofstream(dir.file("v.npy"), std::ios::binary) << bytes;
  CHECK(errorOf(dir.file("v.npy")).find("unsupported .npy format version 4.0") !=
        std::string::npos);
}

TEST_CASE("npy reads a stream (FIFO) in chunks and notices extra or missing data") {
  TempDir dir;
  writeNpy(dir.file("src.npy"), NpyArray{{300, 1000}, ramp(300000)});
  std::string bytes;
  {
    std::ifstream in(dir.file("src.npy"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string fifo = dir.file("fifo.npy");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const auto& [name, content] :
       {std::pair{"exact", bytes}, {"extra", bytes + "x"}, {"short", bytes.substr(0, 9999)}}) {
    CAPTURE(name);
    std::thread writer(
        [&, content = content] { std::ofstream(fifo, std::ios::binary) << content; });
    std::string error;
    NpyArray a;
    try {
      a = readNpy(fifo);
    } catch (const neuronsim::Error& e) {
      error = e.what();
    }
    writer.join();
    if (std::string(name) == "exact") {
      CHECK(error.empty());
      CHECK(a.values == ramp(300000));
    } else {
      CHECK(error.find(std::string(name) == "extra" ? "does not match the data"
                                                    : "truncated data") != std::string::npos);
    }
  }
}
