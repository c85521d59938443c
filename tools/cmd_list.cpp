// neuronsim list (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int listCommand(int, char**) { throw Error("'neuronsim list' is not built yet"); }

}  // namespace neuronsim::tools
