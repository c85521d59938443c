// Buffered JSON fragment writer.
#include "traces/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "isa/error.h"

namespace neuronsim::traces {

namespace {
constexpr size_t kBufferBytes = 1 << 20;
constexpr char kHex[] = "0123456789abcdef";
}  // namespace

void appendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (u < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

JsonWriter::JsonWriter(const std::string& path) : path_(path), buffer_(kBufferBytes, '\0') {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw Error("cannot write '" + path + "': " + std::strerror(errno));
}

JsonWriter::~JsonWriter() {
  if (!file_) return;
  try {
    close();
  } catch (...) {
  }
}

void JsonWriter::flush() {
  if (used_ && file_ && std::fwrite(buffer_.data(), 1, used_, file_) != used_) failed_ = true;
  used_ = 0;
}

void JsonWriter::reserve(size_t bytes) {
  if (used_ + bytes > buffer_.size()) flush();
  if (bytes > buffer_.size()) buffer_.resize(bytes);
}

JsonWriter& JsonWriter::raw(std::string_view text) {
  reserve(text.size());
  std::memcpy(buffer_.data() + used_, text.data(), text.size());
  used_ += text.size();
  return *this;
}

JsonWriter& JsonWriter::str(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 8);
  appendJsonString(quoted, text);
  return raw(quoted);
}

JsonWriter& JsonWriter::num(double value) {
  reserve(32);
  if (!std::isfinite(value)) value = 0;
  auto [end, ec] = std::to_chars(buffer_.data() + used_, buffer_.data() + used_ + 32, value);
  used_ = static_cast<size_t>(end - buffer_.data());
  return *this;
}

JsonWriter& JsonWriter::num(int64_t value) {
  reserve(24);
  auto [end, ec] = std::to_chars(buffer_.data() + used_, buffer_.data() + used_ + 24, value);
  used_ = static_cast<size_t>(end - buffer_.data());
  return *this;
}

void JsonWriter::close() {
  if (!file_) return;
  flush();
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) throw Error("cannot write '" + path_ + "': write failed (disk full?)");
}

}  // namespace neuronsim::traces
