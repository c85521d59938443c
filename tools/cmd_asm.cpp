// neuronsim asm (not built yet).
#include "isa/error.h"
#include "tools/commands.h"

namespace neuronsim::tools {

int asmCommand(int, char**) { throw Error("'neuronsim asm' is not built yet"); }

}  // namespace neuronsim::tools
