// Lexical pieces of the text assembly: tokens, names, numbers and the field-value cursor.
#include "isa/assembly_reader.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace neuronsim::isa::asmtext {

void fail(const std::string& message) {
  throw LineError{message};
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  out += s;
  out += "'";
  return out;
}

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool isName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!isIdentChar(c)) return false;
  return true;
}

int64_t parseInteger(std::string_view text, std::string_view what) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      magnitude > limit)
    fail(fmt::format("bad {} {} (expected an integer)", what, quoted(text)));
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

int32_t narrow32(int64_t v, std::string_view text, std::string_view what) {
  if (v < INT32_MIN || v > INT32_MAX)
    fail(fmt::format("{} {} does not fit in 32 bits", what, quoted(text)));
  return static_cast<int32_t>(v);
}

float parseFloat(std::string_view text, std::string_view what) {
  const std::string s(text);
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])) || end != s.c_str() + s.size())
    fail(fmt::format("bad {} {} (expected a number)", what, quoted(text)));
  return v;
}

std::vector<std::string_view> tokenize(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    const size_t start = i;
    int depth = 0;
    while (i < text.size() && (depth > 0 || !std::isspace(static_cast<unsigned char>(text[i])))) {
      if (text[i] == '[') ++depth;
      if (text[i] == ']' && depth > 0) --depth;
      ++i;
    }
    tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

std::string unescapeNote(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    out += c == 'n' ? '\n' : c == 'r' ? '\r' : c;
  }
  return out;
}

bool Reader::done() {
  skipSpace();
  return pos_ >= text_.size();
}

bool Reader::accept(char c) {
  skipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

bool Reader::next(char c) {
  skipSpace();
  return pos_ < text_.size() && text_[pos_] == c;
}

void Reader::expect(char c) {
  if (!accept(c)) problem(fmt::format("expected '{}'{}", c, here()));
}

std::string_view Reader::word() {
  skipSpace();
  const size_t start = pos_;
  while (pos_ < text_.size() && isIdentChar(text_[pos_])) ++pos_;
  return text_.substr(start, pos_ - start);
}

int64_t Reader::integer() {
  skipSpace();
  const size_t start = pos_;
  if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
  while (pos_ < text_.size() && isIdentChar(text_[pos_])) ++pos_;
  const std::string_view token = text_.substr(start, pos_ - start);
  if (token.empty()) problem(fmt::format("expected an integer{}", here()));
  try {
    return parseInteger(token, "integer");
  } catch (const LineError& e) {
    problem(e.message);
  }
}

void Reader::problem(const std::string& why) const {
  fail(fmt::format("bad {} {}: {}", what_, quoted(text_), why));
}

void Reader::skipSpace() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
}

std::string Reader::here() const {
  return pos_ < text_.size() ? fmt::format(" at {}", quoted(text_.substr(pos_))) : " at the end";
}

}  // namespace neuronsim::isa::asmtext
