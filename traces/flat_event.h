#pragma once
// One trace event with scalar fields and scalar args, as read from a Chrome trace file.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::traces {

/// A scalar JSON value: a number (kept as double and, when integral in the file, as int64), a
/// string, or (args only) an array of numbers.
struct FlatValue {
  enum class Kind : uint8_t { Other, Integer, Real, Text, List } kind = Kind::Other;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<double> list;  ///< Kind::List: the numbers (other elements skipped)
};

/// A trace event: its top-level scalar fields (ph, cat, name, tid, ts, dur, ...) and its args
/// (scalars and arrays of numbers).
/// Reused from event to event without reallocating (`clear` keeps capacity).
class FlatEvent {
 public:
  void clear() { fields_ = args_ = 0; }
  FlatValue& field(std::string_view key) { return slot(fieldKeys_, fieldValues_, fields_, key); }
  FlatValue& arg(std::string_view key) { return slot(argKeys_, argValues_, args_, key); }
  const FlatValue* findField(std::string_view key) const {
    return find(fieldKeys_, fieldValues_, fields_, key);
  }
  const FlatValue* findArg(std::string_view key) const {
    return find(argKeys_, argValues_, args_, key);
  }

  double number(std::string_view key, double fallback) const {
    return asNumber(findField(key), fallback);
  }
  std::string text(std::string_view key, const std::string& fallback) const {
    return asText(findField(key), fallback);
  }
  double argNumber(std::string_view key, double fallback) const {
    return asNumber(findArg(key), fallback);
  }
  int64_t argInteger(std::string_view key, int64_t fallback) const;
  std::string argText(std::string_view key, const std::string& fallback) const {
    return asText(findArg(key), fallback);
  }
  /// The numbers of an array arg; null when absent or not an array.
  const std::vector<double>* argList(std::string_view key) const;

  /// Copies the scalar fields and args of a parsed event (nested values other than args are
  /// skipped).
  void assign(const nlohmann::json& event);

 private:
  static FlatValue& slot(std::vector<std::string>& keys, std::vector<FlatValue>& values,
                         size_t& used, std::string_view key);
  static const FlatValue* find(const std::vector<std::string>& keys,
                               const std::vector<FlatValue>& values, size_t used,
                               std::string_view key);
  static double asNumber(const FlatValue* v, double fallback);
  static std::string asText(const FlatValue* v, const std::string& fallback);

  std::vector<std::string> fieldKeys_, argKeys_;
  std::vector<FlatValue> fieldValues_, argValues_;
  size_t fields_ = 0, args_ = 0;
};

/// Sets `out` from a scalar JSON value or an array of numbers (anything else becomes Kind::Other).
void setFlatValue(FlatValue& out, const nlohmann::json& value);

}  // namespace neuronsim::traces
