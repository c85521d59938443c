#pragma once
// The builder's free-text note on an instruction: one shared, immutable string, so that the
// thousands of instructions a note covers hold a reference to it instead of a copy each.

#include <memory>
#include <string>
#include <utility>

namespace neuronsim::isa {

class Note {
 public:
  Note() = default;
  Note(std::string text) {
    if (!text.empty()) text_ = std::make_shared<const std::string>(std::move(text));
  }
  Note(const char* text) : Note(std::string(text)) {}

  bool empty() const { return text_ == nullptr; }
  /// The text ("" when there is none).
  const std::string& str() const { return text_ ? *text_ : kEmpty(); }
  operator const std::string&() const { return str(); }

  friend bool operator==(const Note& a, const Note& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }

 private:
  static const std::string& kEmpty() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> text_;
};

}  // namespace neuronsim::isa
