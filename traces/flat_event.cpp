// Flat trace events: scalar fields and args with reusable storage.
#include "traces/flat_event.h"

#include <cmath>

namespace neuronsim::traces {

FlatValue& FlatEvent::slot(std::vector<std::string>& keys, std::vector<FlatValue>& values,
                           size_t& used, std::string_view key) {
  if (used == keys.size()) {
    keys.emplace_back();
    values.emplace_back();
  }
  keys[used].assign(key);
  FlatValue& v = values[used++];
  v.kind = FlatValue::Kind::Other;
  return v;
}

const FlatValue* FlatEvent::find(const std::vector<std::string>& keys,
                                 const std::vector<FlatValue>& values, size_t used,
                                 std::string_view key) {
  for (size_t i = 0; i < used; ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

double FlatEvent::asNumber(const FlatValue* v, double fallback) {
  if (!v) return fallback;
  if (v->kind == FlatValue::Kind::Integer) return static_cast<double>(v->integer);
  if (v->kind == FlatValue::Kind::Real) return v->real;
  return fallback;
}

std::string FlatEvent::asText(const FlatValue* v, const std::string& fallback) {
  return v && v->kind == FlatValue::Kind::Text ? v->text : fallback;
}

int64_t FlatEvent::argInteger(std::string_view key, int64_t fallback) const {
  const FlatValue* v = findArg(key);
  if (!v) return fallback;
  if (v->kind == FlatValue::Kind::Integer) return v->integer;
  if (v->kind == FlatValue::Kind::Real && v->real >= -0x1p63 && v->real < 0x1p63)
    return static_cast<int64_t>(v->real);
  return fallback;
}

const std::vector<double>* FlatEvent::argList(std::string_view key) const {
  const FlatValue* v = findArg(key);
  return v && v->kind == FlatValue::Kind::List ? &v->list : nullptr;
}

void setFlatValue(FlatValue& out, const nlohmann::json& value) {
  if (value.is_array()) {
    out.kind = FlatValue::Kind::List;
    out.list.clear();
    for (const auto& item : value)
      if (item.is_number()) out.list.push_back(item.get<double>());
  } else if (value.is_number_integer()) {
    out.kind = FlatValue::Kind::Integer;
    out.integer = value.get<int64_t>();
  } else if (value.is_number()) {
    out.kind = FlatValue::Kind::Real;
    out.real = value.get<double>();
  } else if (value.is_string()) {
    out.kind = FlatValue::Kind::Text;
    out.text = value.get_ref<const std::string&>();
  } else {
    out.kind = FlatValue::Kind::Other;
  }
}

void FlatEvent::assign(const nlohmann::json& event) {
  clear();
  if (!event.is_object()) return;
  for (const auto& [key, value] : event.items()) {
    if (key == "args" && value.is_object()) {
      for (const auto& [argKey, argValue] : value.items()) setFlatValue(arg(argKey), argValue);
    } else {
      setFlatValue(field(key), value);
    }
  }
}

}  // namespace neuronsim::traces
