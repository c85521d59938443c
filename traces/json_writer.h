#pragma once
// Streams JSON text straight to a file through a large buffer (no document kept in memory).

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace neuronsim::traces {

/// Buffered writer of JSON fragments. The caller writes the punctuation; this class
/// formats numbers and escaped strings. Opens `path` for writing; throws neuronsim::Error
/// naming the path when it cannot be opened or written.
class JsonWriter {
 public:
  explicit JsonWriter(const std::string& path);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  /// Appends text as is.
  JsonWriter& raw(std::string_view text);
  /// Appends a quoted, escaped JSON string.
  JsonWriter& str(std::string_view text);
  /// Appends a number in shortest round-trip form (non-finite values become 0).
  JsonWriter& num(double value);
  JsonWriter& num(int64_t value);
  /// Flushes and closes; throws on a write error. Called by the destructor if needed (errors
  /// ignored there).
  void close();

 private:
  void reserve(size_t bytes);
  void flush();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  size_t used_ = 0;
  bool failed_ = false;
};

/// Appends `text` to `out` as a quoted JSON string (quotes, backslashes and control characters
/// escaped).
void appendJsonString(std::string& out, std::string_view text);

}  // namespace neuronsim::traces
