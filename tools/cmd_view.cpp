// neuronsim view (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int viewCommand(int, char**) { throw Error("'neuronsim view' is not built yet"); }

}  // namespace neuronsim::tools
