#pragma once
// "did you mean" for a mistyped name: the closest known name, when one is close.

#include <string>
#include <string_view>
#include <vector>

namespace neuronsim::isa {

/// " (did you mean NAME?)" for the candidate fewest single-character edits (insert, delete,
/// replace, swap of neighbours) away from `word`, when that is at most 2 and less than half of
/// `word`'s length; "" otherwise (or when two candidates tie).
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace neuronsim::isa
