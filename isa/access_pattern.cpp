// Access-pattern sizes and memory-space names.
#include "isa/access_pattern.h"

namespace neuronsim::isa {

std::string_view spaceName(Space space) {
  switch (space) {
    case Space::Hbm:
      return "hbm";
    case Space::Sbuf:
      return "sbuf";
    case Space::Psum:
      return "psum";
  }
  return "?";
}

int64_t AccessPattern::freeSize() const {
  int64_t n = 1;
  for (const Dim& d : dims) n *= d.num;
  return n;
}

int64_t AccessPattern::numElements() const {
  return static_cast<int64_t>(partitionCount) * freeSize();
}

}  // namespace neuronsim::isa
