// SAX handler over a Chrome trace: flat events for traceEvents, a small DOM for the neuronsim
// section.
#include "traces/trace_sax.h"

#include <vector>

namespace neuronsim::traces {

namespace {

using Json = nlohmann::json;

/// nlohmann SAX handler: flat events out of traceEvents, the neuronsim section as a small DOM.
class TraceSax {
 public:
  explicit TraceSax(const std::function<void(const FlatEvent&)>& onEvent) : onEvent_(onEvent) {}

  bool null() { return value(Json()); }
  bool boolean(bool v) { return value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return value(Json(v)); }
  bool string(Json::string_t& v) { return value(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return value(Json()); }

  bool key(Json::string_t& k) {
    if (depth_ == 1) {
      topKey_ = k;
      result.topKeys.insert(k);
    } else if (inDom()) {
      domKey_ = k;
    } else {
      key_ = k;
    }
    return true;
  }

  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

  StreamedTrace result;

 private:
  bool inEvents() const { return topKey_ == "traceEvents"; }
  bool inDom() const { return topKey_ == "neuronsim" && depth_ >= 2; }

  bool open(bool isObject) {
    if (depth_ == 0) result.isObject = isObject;
    if (depth_ == 1 && inEvents() && !isObject) result.hasEvents = true;
    if (depth_ >= 1 && topKey_ == "neuronsim") domOpen(isObject ? Json::object() : Json::array());
    if (inEvents() && depth_ == 2 && isObject) event_.clear();
    if (inEvents() && depth_ == 3 && isObject && key_ == "args") inArgs_ = true;
    if (inEvents() && depth_ == 4 && inArgs_ && !isObject) {
      list_ = &event_.arg(key_);
      list_->kind = FlatValue::Kind::List;
      list_->list.clear();
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (depth_ >= 1 && topKey_ == "neuronsim") stack_.pop_back();
    if (inEvents() && depth_ == 3) inArgs_ = false;
    if (inEvents() && depth_ == 4) list_ = nullptr;
    if (inEvents() && depth_ == 2) onEvent_(event_);
    return true;
  }

  bool value(Json v) {
    if (depth_ >= 2 && topKey_ == "neuronsim") {
      domAdd(std::move(v));
    } else if (inEvents() && depth_ == 3) {
      setFlatValue(event_.field(key_), v);
    } else if (inEvents() && depth_ == 4 && inArgs_) {
      setFlatValue(event_.arg(key_), v);
    } else if (inEvents() && depth_ == 5 && list_ && v.is_number()) {
      list_->list.push_back(v.get<double>());
    }
    return true;
  }

  void domOpen(Json container) {
    if (stack_.empty()) {
      result.neuronsim = std::move(container);
      stack_.push_back(&result.neuronsim);
      return;
    }
    Json* parent = stack_.back();
    if (parent->is_object()) {
      Json& child = (*parent)[domKey_] = std::move(container);
      stack_.push_back(&child);
    } else {
      parent->push_back(std::move(container));
      stack_.push_back(&parent->back());
    }
  }

  void domAdd(Json v) {
    Json* parent = stack_.back();
    if (parent->is_object())
      (*parent)[domKey_] = std::move(v);
    else
      parent->push_back(std::move(v));
  }

  const std::function<void(const FlatEvent&)>& onEvent_;
  FlatEvent event_;
  FlatValue* list_ = nullptr;  ///< the array arg being read
  std::string topKey_, key_, domKey_;
  std::vector<Json*> stack_;
  int depth_ = 0;
  bool inArgs_ = false;
};

}  // namespace

StreamedTrace streamTrace(const std::string& text,
                          const std::function<void(const FlatEvent&)>& onEvent) {
  TraceSax sax(onEvent);
  const bool ok = Json::sax_parse(text, &sax);
  StreamedTrace result = std::move(sax.result);
  result.valid = ok;
  return result;
}

}  // namespace neuronsim::traces
