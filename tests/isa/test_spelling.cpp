// didYouMean: the closest candidate within 2 edits, nothing for exact, far, tied or short words.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "isa/spelling.h"

using neuronsim::isa::didYouMean;

TEST_CASE("didYouMean suggests the one candidate a typo or two away") {
  const std::vector<std::string> options = {"--dtype", "--trace", "--strict", "--n-tile", "--set"};
  CHECK(didYouMean("--dtyp", options) == " (did you mean --dtype?)");     // a deletion
  CHECK(didYouMean("--dtypee", options) == " (did you mean --dtype?)");   // an insertion
  CHECK(didYouMean("--strcit", options) == " (did you mean --strict?)");  // a swap of neighbours
  CHECK(didYouMean("--ntile", options) == " (did you mean --n-tile?)");
  CHECK(didYouMean("--tarce", options) == " (did you mean --trace?)");
  CHECK(didYouMean("--srtic", options) == " (did you mean --strict?)");  // two edits
}

TEST_CASE("didYouMean says nothing when no candidate is clearly meant") {
  const std::vector<std::string> options = {"--dtype", "--trace", "--set", "--seed"};
  CHECK(didYouMean("--dtype", options).empty());                  // exact: nothing to suggest
  CHECK(didYouMean("--padding", options).empty());                // far from all
  CHECK(didYouMean("--ntyle", {"--n-tile", "--dtype"}).empty());  // two edits from each: a tie
  CHECK(didYouMean("--sed", options).empty());  // --set and --seed are one edit each: a tie
  CHECK(didYouMean("--set", {}).empty());
  CHECK(didYouMean("ab", {"ac"}).empty());           // one edit of two letters is a different word
  CHECK(didYouMean("abc", {"abd", "abe"}).empty());  // a tie
}
