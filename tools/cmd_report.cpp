// neuronsim report TRACE.json [--csv FILE] [--top N]: text analysis of a saved trace.
#include <cstdio>
#include <string>

#include "isa/error.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "traces/csv.h"
#include "traces/report.h"

namespace neuronsim::tools {

int reportCommand(int argc, char** argv) {
  Args args(argc, argv, 2, {"help"});
  if (args.flag("help")) {
    std::printf(
        "usage: neuronsim report TRACE.json [--csv FILE] [--top N]\n"
        "  prints the summary, the top N opcodes by time per engine and queue (default 5),\n"
        "  stall time by cause, the critical path and warnings; --csv also writes the\n"
        "  instruction table.\n");
    return 0;
  }
  args.allowOnly("report", {"csv", "top", "help"});
  if (args.positional().size() != 1)
    throw Error("report: expected one TRACE.json, got " + std::to_string(args.positional().size()) +
                " arguments");
  int top = 5;
  if (auto t = args.get("top")) {
    try {
      top = std::stoi(*t);
    } catch (const std::exception&) {
      throw Error("report: --top must be a number, got '" + *t + "'");
    }
    if (top < 1) throw Error("report: --top must be at least 1, got '" + *t + "'");
  }
  const auto model = traces::loadTraceModel(args.positional()[0]);
  if (auto csv = args.get("csv")) traces::writeInstructionCsv(*csv, model);
  std::fputs(traces::reportText(model, top).c_str(), stdout);
  return 0;
}

}  // namespace neuronsim::tools
