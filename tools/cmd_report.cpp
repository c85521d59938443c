// neuronsim report (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int reportCommand(int, char**) { throw Error("'neuronsim report' is not built yet"); }

}  // namespace neuronsim::tools
