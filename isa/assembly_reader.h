#pragma once
// Lexical pieces of the text assembly: tokens, names, numbers and a cursor over one field value.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::isa::asmtext {

/// A problem inside one line; parseProgram prefixes "<source>:<line>: ".
struct LineError {
  std::string message;
};

[[noreturn]] void fail(const std::string& message);
/// `s` in single quotes.
std::string quoted(std::string_view s);
bool isIdentChar(char c);
/// Letters, digits and '_', not starting with a digit.
bool isName(std::string_view s);
/// An optionally signed decimal or 0x-hex integer filling all of `text`; `what` names it in errors.
int64_t parseInteger(std::string_view text, std::string_view what);
int32_t narrow32(int64_t v, std::string_view text, std::string_view what);
/// A float as strtof reads it (decimal, hex float, inf, nan), filling all of `text`.
float parseFloat(std::string_view text, std::string_view what);
/// Splits a line on whitespace outside brackets.
std::vector<std::string_view> tokenize(std::string_view text);
/// Undoes the note escapes \n, \r and \\.
std::string unescapeNote(std::string_view text);

/// A cursor over one field value; errors read "bad <what> '<value>': <why>". Spaces between
/// pieces are skipped.
class Reader {
 public:
  Reader(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  /// True when only spaces remain.
  bool done();
  /// Consumes `c` if it comes next.
  bool accept(char c);
  /// True when the next non-space character is `c` (not consumed).
  bool next(char c);
  void expect(char c);
  /// Letters, digits and '_' (possibly empty).
  std::string_view word();
  /// An optionally signed decimal or 0x-hex integer.
  int64_t integer();
  [[noreturn]] void problem(const std::string& why) const;

 private:
  void skipSpace();
  std::string here() const;

  std::string_view text_;
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace neuronsim::isa::asmtext
