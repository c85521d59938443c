// NumPy .npy reading (little-endian float32/float64/float16, C order, format v1-v3) and float32
// writing.
#include "isa/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "isa/dtype.h"
#include "isa/error.h"

namespace neuronsim::isa {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

/// The value text after `'key':` in the header dict, or empty when the key is missing.
std::string_view valueOf(std::string_view header, std::string_view key) {
  std::string quoted(1, '\'');
  quoted.append(key);
  quoted.push_back('\'');
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return {};
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  return header.substr(at);
}

std::string parseDescr(const std::string& path, std::string_view header) {
  const std::string_view v = valueOf(header, "descr");
  if (v.empty() || (v[0] != '\'' && v[0] != '"')) fail(path, "npy header has no 'descr'");
  const size_t end = v.find(v[0], 1);
  if (end == std::string_view::npos) fail(path, "npy header has a malformed 'descr'");
  return std::string(v.substr(1, end - 1));
}

bool parseFortran(const std::string& path, std::string_view header) {
  const std::string_view v = valueOf(header, "fortran_order");
  if (v.starts_with("False")) return false;
  if (v.starts_with("True")) return true;
  fail(path, "npy header has no 'fortran_order'");
}

std::vector<int64_t> parseShape(const std::string& path, std::string_view header) {
  const std::string_view v = valueOf(header, "shape");
  const size_t close = v.find(')');
  if (v.empty() || v[0] != '(' || close == std::string_view::npos)
    fail(path, "npy header has no 'shape' tuple");
  std::vector<int64_t> shape;
  std::string_view body = v.substr(1, close - 1);
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == 'L')) item.remove_suffix(1);
    if (!item.empty()) {
      int64_t n = 0;
      for (char c : item) {
        if (c < '0' || c > '9')
          fail(path, "npy shape has a bad dimension '" + std::string(item) + "'");
        n = n * 10 + (c - '0');
      }
      shape.push_back(n);
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return shape;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  return s + ")";
}

}  // namespace

NpyArray readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  // 1. Preamble: magic, version, header length.
  if (bytes.size() < 10 || std::string_view(bytes).substr(0, 6) != kMagic)
    fail(path, "not a .npy file (bad magic)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen = 0;
  size_t headerStart = 0;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated .npy header");
    for (int i = 3; i >= 0; --i)
      headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLen) fail(path, "truncated .npy header");
  const std::string_view header = std::string_view(bytes).substr(headerStart, headerLen);

  // 2. Header dict.
  const std::string descr = parseDescr(path, header);
  int itemBytes = 0;
  if (descr == "<f4")
    itemBytes = 4;
  else if (descr == "<f8")
    itemBytes = 8;
  else if (descr == "<f2")
    itemBytes = 2;
  else
    fail(path,
         "unsupported dtype '" + descr + "' (need little-endian float32, float64 or float16)");
  if (parseFortran(path, header))
    fail(path, "Fortran-order arrays are not supported (save with C order)");
  NpyArray array;
  array.shape = parseShape(path, header);

  // 3. Data.
  int64_t count = 1;
  for (int64_t d : array.shape) count *= d;
  const size_t dataStart = headerStart + headerLen;
  const size_t have = bytes.size() - dataStart;
  const auto need = static_cast<size_t>(count) * static_cast<size_t>(itemBytes);
  if (have < need)
    fail(path, "truncated data: shape " + shapeText(array.shape) + " needs " +
                   std::to_string(need) + " bytes, file has " + std::to_string(have));
  if (have > need)
    fail(path, "shape " + shapeText(array.shape) + " does not match the data: " +
                   std::to_string(have) + " bytes for " + std::to_string(need));
  array.values.resize(static_cast<size_t>(count));
  const char* p = bytes.data() + dataStart;
  for (size_t i = 0; i < array.values.size(); ++i, p += itemBytes) {
    if (itemBytes == 4) {
      std::memcpy(&array.values[i], p, 4);
    } else if (itemBytes == 8) {
      double d;
      std::memcpy(&d, p, 8);
      array.values[i] = static_cast<float>(d);
    } else {
      array.values[i] = loadElement(Dtype::Fp16, reinterpret_cast<const std::byte*>(p));
    }
  }
  return array;
}

void writeNpy(const std::string& path, const NpyArray& array) {
  int64_t count = 1;
  for (int64_t d : array.shape) count *= d;
  if (static_cast<size_t>(count) != array.values.size())
    fail(path, "cannot write: shape " + shapeText(array.shape) + " holds " + std::to_string(count) +
                   " values, not " + std::to_string(array.values.size()));
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeText(array.shape) + ", }";
  // Pad with spaces so magic + version + length + header + '\n' is a multiple of 64 bytes.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, std::string("cannot write: ") + std::strerror(errno));
    out.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
    const char version[2] = {1, 0};
    out.write(version, 2);
    const char len[2] = {static_cast<char>(header.size() & 0xFF),
                         static_cast<char>(header.size() >> 8)};
    out.write(len, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(array.values.data()),
              static_cast<std::streamsize>(array.values.size() * sizeof(float)));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      fail(path, "cannot write: I/O error");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail(path, "cannot write: " + ec.message());
  }
}

}  // namespace neuronsim::isa
