// Memory-space names.
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

}  // namespace neuronsim::isa
