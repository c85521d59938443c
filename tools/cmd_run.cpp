// neuronsim run (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int runCommand(int, char**) { throw Error("'neuronsim run' is not built yet"); }

}  // namespace neuronsim::tools
