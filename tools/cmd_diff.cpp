// neuronsim diff A.json B.json: total, per-engine and per-opcode time and count side by side.
#include <cstdio>
#include <string>

#include "isa/error.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "traces/diff.h"

namespace neuronsim::tools {

int diffCommand(int argc, char** argv) {
  Args args(argc, argv, 2, {"help"});
  if (args.flag("help")) {
    std::printf(
        "usage: neuronsim diff A.json B.json\n  compares two saved traces (B against A).\n");
    return 0;
  }
  args.allowOnly("diff", {"help"});
  if (args.positional().size() != 2)
    throw Error("diff: expected two traces A.json B.json, got " +
                std::to_string(args.positional().size()) + " arguments");
  const auto& a = args.positional()[0];
  const auto& b = args.positional()[1];
  const auto diff = traces::diffTraces(traces::loadTraceModel(a), traces::loadTraceModel(b));
  std::fputs(traces::diffText(diff, a, b).c_str(), stdout);
  return 0;
}

}  // namespace neuronsim::tools
