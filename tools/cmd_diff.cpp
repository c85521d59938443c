// neuronsim diff (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int diffCommand(int, char**) { throw Error("'neuronsim diff' is not built yet"); }

}  // namespace neuronsim::tools
