#pragma once
// Streams JSON text to a file or a string through a large buffer (no document kept in memory).

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::traces {

/// Keyed JSON writer: the caller opens and closes objects and arrays and names keys; the writer
/// places every comma, colon and quote. Numbers are written in shortest round-trip form
/// (non-finite values become 0). Writes to `path` (flushed every 1 MiB) or, default-constructed,
/// to a string taken with take(). Misuse (a value where a key is due, unbalanced close) throws
/// std::logic_error; a file that cannot be opened or written throws neuronsim::Error naming it.
class JsonWriter {
 public:
  JsonWriter();
  explicit JsonWriter(const std::string& path);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  /// `itemPerLine`: a newline after every member (keeps big arrays greppable).
  JsonWriter& beginObject(bool itemPerLine = false);
  JsonWriter& endObject();
  JsonWriter& beginArray(bool itemPerLine = false);
  JsonWriter& endArray();
  /// Names the next member of the current object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& value(T number) {
    return integer(static_cast<int64_t>(number));
  }
  /// A value that is already serialized JSON (e.g. nlohmann::json::dump()).
  JsonWriter& json(std::string_view text);

  /// key(name).value(v)
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    return key(name).value(v);
  }
  /// An array of numbers.
  template <typename T>
  JsonWriter& array(std::string_view name, const std::vector<T>& values) {
    key(name).beginArray();
    for (const T& v : values) value(v);
    return endArray();
  }

  /// String mode: the text written so far (the writer is left empty).
  std::string take();
  /// File mode: flushes and closes; throws on a write error. Called by the destructor if needed
  /// (errors ignored there).
  void close();

 private:
  /// One open object or array.
  struct Level {
    bool isObject;
    bool itemPerLine;
    bool empty = true;
    bool keyed = false;  ///< object: a key was written, its value is due
  };

  JsonWriter& integer(int64_t number);
  void beforeValue();
  void append(std::string_view text);
  void reserve(size_t bytes);
  void flush();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  size_t used_ = 0;
  bool failed_ = false;
  std::vector<Level> levels_;
};

/// Appends `text` to `out` as a quoted JSON string (quotes, backslashes and control characters
/// escaped).
void appendJsonString(std::string& out, std::string_view text);

}  // namespace neuronsim::traces
