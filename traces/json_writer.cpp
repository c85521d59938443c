// Keyed JSON writer over a buffer flushed to a file, or kept as a string.
#include "traces/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

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

JsonWriter::JsonWriter() = default;

JsonWriter::JsonWriter(const std::string& path) : path_(path), buffer_(kBufferBytes, '\0') {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
}

JsonWriter::~JsonWriter() {
  if (!file_) return;
  try {
    close();
  } catch (...) {
  }
}

void JsonWriter::flush() {
  if (!file_) return;
  if (used_ && std::fwrite(buffer_.data(), 1, used_, file_) != used_) failed_ = true;
  used_ = 0;
}

void JsonWriter::reserve(size_t bytes) {
  if (!file_) {
    if (used_ + bytes > buffer_.size()) buffer_.resize(std::max(buffer_.size() * 2, used_ + bytes));
    return;
  }
  if (used_ + bytes > buffer_.size()) flush();
  if (bytes > buffer_.size()) buffer_.resize(bytes);
}

void JsonWriter::append(std::string_view text) {
  reserve(text.size());
  std::memcpy(buffer_.data() + used_, text.data(), text.size());
  used_ += text.size();
}

void JsonWriter::beforeValue() {
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.isObject) {
    if (!level.keyed) throw std::logic_error("json writer: a value inside an object needs a key");
    level.keyed = false;
    return;
  }
  if (!level.empty) append(level.itemPerLine ? ",\n" : ",");
  level.empty = false;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (levels_.empty() || !levels_.back().isObject || levels_.back().keyed)
    throw std::logic_error(fmt::format("json writer: key '{}' outside an object", name));
  Level& level = levels_.back();
  if (!level.empty) append(level.itemPerLine ? ",\n" : ",");
  level.empty = false;
  level.keyed = true;
  std::string quoted;
  appendJsonString(quoted, name);
  quoted.push_back(':');
  append(quoted);
  return *this;
}

JsonWriter& JsonWriter::beginObject(bool itemPerLine) {
  beforeValue();
  append("{");
  levels_.push_back({true, itemPerLine});
  return *this;
}

JsonWriter& JsonWriter::beginArray(bool itemPerLine) {
  beforeValue();
  append(itemPerLine ? "[\n" : "[");
  levels_.push_back({false, itemPerLine});
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  if (levels_.empty() || !levels_.back().isObject || levels_.back().keyed)
    throw std::logic_error("json writer: endObject without an open object");
  levels_.pop_back();
  append("}");
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  if (levels_.empty() || levels_.back().isObject)
    throw std::logic_error("json writer: endArray without an open array");
  const bool perLine = levels_.back().itemPerLine;
  levels_.pop_back();
  append(perLine ? "\n]" : "]");
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  beforeValue();
  std::string quoted;
  quoted.reserve(text.size() + 8);
  appendJsonString(quoted, text);
  append(quoted);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  beforeValue();
  reserve(32);
  if (!std::isfinite(number)) number = 0;
  auto [end, ec] = std::to_chars(buffer_.data() + used_, buffer_.data() + used_ + 32, number);
  used_ = static_cast<size_t>(end - buffer_.data());
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t number) {
  beforeValue();
  reserve(24);
  auto [end, ec] = std::to_chars(buffer_.data() + used_, buffer_.data() + used_ + 24, number);
  used_ = static_cast<size_t>(end - buffer_.data());
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  beforeValue();
  append(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::json(std::string_view text) {
  beforeValue();
  append(text);
  return *this;
}

std::string JsonWriter::take() {
  std::string out(buffer_.data(), used_);
  used_ = 0;
  levels_.clear();
  return out;
}

void JsonWriter::close() {
  if (!file_) return;
  flush();
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) throw Error(fmt::format("cannot write '{}': write failed (disk full?)", path_));
}

}  // namespace neuronsim::traces
