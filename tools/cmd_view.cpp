// neuronsim view TRACE.json [-o FILE.html]: writes the self-contained HTML timeline.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "isa/error.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "traces/viewer/viewer.h"

namespace neuronsim::tools {

int viewCommand(int argc, char** argv) {
  std::vector<char*> argvLong(argv, argv + argc);
  static char kOutput[] = "--output";
  for (auto& a : argvLong)
    if (!std::strcmp(a, "-o")) a = kOutput;
  Args args(static_cast<int>(argvLong.size()), argvLong.data(), 2, {"help"});
  if (args.flag("help")) {
    std::printf(
        "usage: neuronsim view TRACE.json [-o FILE.html]\n"
        "  writes one self-contained HTML timeline (default: TRACE.html beside the trace).\n");
    return 0;
  }
  args.allowOnly("view", {"output", "help"});
  if (args.positional().size() != 1)
    throw Error("view: expected one TRACE.json, got " + std::to_string(args.positional().size()) +
                " arguments");
  const std::string trace = args.positional()[0];
  std::string output = args.get("output").value_or("");
  if (output.empty()) {
    const auto slash = trace.find_last_of('/');
    const auto dot = trace.find_last_of('.');
    output = (dot != std::string::npos && (slash == std::string::npos || dot > slash)
                  ? trace.substr(0, dot)
                  : trace) +
             ".html";
  }
  traces::writeViewer(output, traces::loadTraceModel(trace), trace);
  std::printf("wrote %s\n", output.c_str());
  return 0;
}

}  // namespace neuronsim::tools
