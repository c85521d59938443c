// neuronsim calibrate (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int calibrateCommand(int, char**) { throw Error("'neuronsim calibrate' is not built yet"); }

}  // namespace neuronsim::tools
