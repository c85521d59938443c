// NumPy .npy reading (little-endian float32/float64/float16, C order, format v1-v3), streamed and
// bounded, and float32 writing.
#include "isa/npy.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

#include "isa/dtype.h"
#include "isa/error.h"
#include "isa/file_read.h"
#include "isa/file_write.h"
#include "isa/size_limits.h"

namespace neuronsim::isa {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kChunkBytes = 1 << 20;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(fmt::format("{}: {}", path, what));
}

/// Python tuple text: "(2,)" for one axis, "(2, 3)" otherwise.
std::string tupleText(std::span<const int64_t> shape) {
  return shape.size() == 1 ? fmt::format("({},)", shape[0])
                           : fmt::format("({})", fmt::join(shape, ", "));
}

/// The header dict, a Python literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2,
/// 3), }.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    expect('{');
    while (!eat('}')) {
      const std::string key = quoted("a quoted key");
      expect(':');
      if (key == "descr" && !haveDescr) {
        descr = quoted("a quoted 'descr'");
        haveDescr = true;
      } else if (key == "fortran_order" && !haveFortran) {
        fortran = boolean();
        haveFortran = true;
      } else if (key == "shape" && !haveShape) {
        shape = tuple();
        haveShape = true;
      } else {
        bad(fmt::format("an unexpected or repeated key '{}'", key));
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (at_ != text_.size()) bad("text after the dict");
    if (!haveDescr || !haveFortran || !haveShape)
      bad("no 'descr', 'fortran_order' and 'shape' keys");
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(path_, fmt::format("malformed npy header: {}", what));
  }
  void skipSpace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t'))
      ++at_;
  }
  bool eat(char c) {
    skipSpace();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(fmt::format("expected '{}' at byte {}", c, at_));
  }
  std::string quoted(const char* what) {
    skipSpace();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"'))
      bad(fmt::format("expected {}", what));
    const size_t end = text_.find(text_[at_], at_ + 1);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string s(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return s;
  }
  bool boolean() {
    skipSpace();
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    bad("'fortran_order' is not True or False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> shape;
    while (!eat(')')) {
      skipSpace();
      const size_t start = at_;
      int64_t n = 0;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
        n = checkedAdd(checkedMul(n, 10).value_or(-1), text_[at_] - '0').value_or(-1);
        if (n < 0 || n > kMaxTensorElements)
          fail(path_, fmt::format("npy shape has an extent over the limit of {} elements",
                                  kMaxTensorElements));
        ++at_;
      }
      if (at_ == start)
        bad(fmt::format("a shape extent that is not a non-negative integer at byte {}", at_));
      if (at_ < text_.size() && text_[at_] == 'L') ++at_;
      shape.push_back(n);
      if (static_cast<int64_t>(shape.size()) > kMaxRank)
        fail(path_, fmt::format("npy shape has more than {} axes", kMaxRank));
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  size_t at_ = 0;
};

/// Preamble and header of an open file; leaves the file positioned at the data.
NpyHeader readHeader(InputFile& in) {
  const std::string& path = in.path();
  // 1. Preamble: magic, version, header length, before anything else is read.
  unsigned char pre[12];
  if (in.read(pre, 8) < 8 || std::string_view(reinterpret_cast<const char*>(pre), 6) != kMagic)
    fail(path, "not a .npy file (bad magic)");
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, fmt::format("unsupported .npy format version {}.{}", major, minor));
  const size_t lengthBytes = major == 1 ? 2 : 4;
  if (in.read(pre + 8, lengthBytes) < lengthBytes) fail(path, "truncated .npy header");
  int64_t headerLen = 0;
  for (size_t i = lengthBytes; i-- > 0;) headerLen = (headerLen << 8) | pre[8 + i];
  if (headerLen > kMaxNpyHeaderBytes)
    fail(path, fmt::format("npy header of {} bytes, over the limit of {}", headerLen,
                           kMaxNpyHeaderBytes));

  // 2. Header dict.
  std::string text(static_cast<size_t>(headerLen), '\0');
  if (static_cast<int64_t>(in.read(text.data(), text.size())) < headerLen)
    fail(path, "truncated .npy header");
  std::string descr;
  bool fortran = false;
  NpyHeader header;
  HeaderParser(text, path).parse(descr, fortran, header.shape);
  if (descr == "<f4") {
    header.itemBytes = 4;
  } else if (descr == "<f8") {
    header.itemBytes = 8;
  } else if (descr == "<f2") {
    header.itemBytes = 2;
  } else {
    fail(path,
         fmt::format("unsupported dtype '{}' (need little-endian float32, float64 or float16)",
                     descr));
  }
  if (fortran) fail(path, "Fortran-order arrays are not supported (save with C order)");
  header.elements = checkedElements(header.shape, fmt::format("{}: npy array", path), true);
  header.dataOffset = static_cast<int64_t>(8 + lengthBytes) + headerLen;

  // 3. Data size against the file size, before any data is read.
  const int64_t need = header.elements * header.itemBytes;
  if (in.size()) {
    const int64_t have = *in.size() - header.dataOffset;
    if (have < need)
      fail(path, fmt::format("truncated data: shape {} needs {} bytes, file has {}",
                             tupleText(header.shape), need, have));
    if (have > need)
      fail(path, fmt::format("shape {} does not match the data: {} bytes for {}",
                             tupleText(header.shape), have, need));
  }
  return header;
}

}  // namespace

NpyHeader readNpyHeader(const std::string& path) {
  InputFile in(path);
  return readHeader(in);
}

NpyArray readNpy(const std::string& path) {
  InputFile in(path);
  const NpyHeader header = readHeader(in);
  NpyArray array;
  array.shape = header.shape;
  const size_t total = static_cast<size_t>(header.elements);
  // A stream's header is unchecked against its data: grow with the data that arrives, so a header
  // cannot make us allocate for data that never comes.
  if (in.size()) array.values.reserve(total);
  std::vector<char> chunk(kChunkBytes);
  const size_t perChunk = kChunkBytes / static_cast<size_t>(header.itemBytes);
  for (size_t done = 0; done < total;) {
    const size_t count = std::min(perChunk, total - done);
    const size_t bytes = count * static_cast<size_t>(header.itemBytes);
    if (in.read(chunk.data(), bytes) < bytes)
      fail(path, fmt::format("truncated data: shape {} needs {} bytes", tupleText(header.shape),
                             header.elements * header.itemBytes));
    array.values.resize(done + count);
    const char* p = chunk.data();
    for (size_t i = 0; i < count; ++i, p += header.itemBytes) {
      float& v = array.values[done + i];
      if (header.itemBytes == 4) {
        std::memcpy(&v, p, 4);
      } else if (header.itemBytes == 8) {
        double d;
        std::memcpy(&d, p, 8);
        v = static_cast<float>(d);
      } else {
        v = loadElement(Dtype::Fp16, reinterpret_cast<const std::byte*>(p));
      }
    }
    done += count;
  }
  char extra;
  if (!in.size() && in.read(&extra, 1) == 1)
    fail(path, fmt::format("shape {} does not match the data: more than {} bytes",
                           tupleText(header.shape), header.elements * header.itemBytes));
  return array;
}

namespace {

void checkValueCount(const std::string& path, std::span<const int64_t> shape,
                     std::span<const float> values) {
  const int64_t count = checkedElements(shape, fmt::format("{}: npy array", path), true);
  if (static_cast<size_t>(count) != values.size())
    fail(path, fmt::format("cannot write: shape {} holds {} values, not {}", tupleText(shape),
                           count, values.size()));
}

}  // namespace

void writeNpyFile(const std::string& path, std::span<const int64_t> shape,
                  std::span<const float> values) {
  checkValueCount(path, shape, values);
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", tupleText(shape));
  // Pad with spaces so magic + version + length + header + '\n' is a multiple of 64 bytes.
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string preamble(kMagic);
  preamble += {'\x01', '\x00', static_cast<char>(header.size() & 0xFF),
               static_cast<char>(header.size() >> 8)};

  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) fail(path, fmt::format("cannot write: {}", std::strerror(errno)));
  bool ok = std::fwrite(preamble.data(), 1, preamble.size(), out) == preamble.size() &&
            std::fwrite(header.data(), 1, header.size(), out) == header.size() &&
            std::fwrite(values.data(), sizeof(float), values.size(), out) == values.size();
  const std::string why = ok ? "" : std::strerror(errno);
  if (std::fclose(out) != 0 && ok)
    fail(path, fmt::format("cannot write: {}", std::strerror(errno)));
  if (!ok) fail(path, fmt::format("cannot write: {}", why));
}

void writeNpy(const std::string& path, const NpyArray& array) {
  checkValueCount(path, array.shape, array.values);
  writeAtomically(path, [&](const std::string& temporary) {
    writeNpyFile(temporary, array.shape, array.values);
  });
}

}  // namespace neuronsim::isa
