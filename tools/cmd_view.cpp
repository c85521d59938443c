// neuronsim view TRACE.json [-o FILE.html]: writes the self-contained HTML timeline.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "isa/error.h"
#include "isa/file_write.h"
#include "tools/commands.h"
#include "traces/viewer/viewer.h"

namespace neuronsim::tools {

namespace {

struct ViewFlags {
  std::vector<std::string> traces;
  std::string output;
  CLI::Option* outputOption = nullptr;
};

/// TRACE.html beside TRACE.json.
std::string defaultOutput(const std::string& trace) {
  const auto slash = trace.find_last_of('/');
  const auto dot = trace.find_last_of('.');
  const bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return fmt::format("{}.html", hasExtension ? trace.substr(0, dot) : trace);
}

int view(const CLI::App* app, const ViewFlags& flags) {
  checkExtras(app, "view");
  if (flags.traces.size() != 1)
    throw Error(fmt::format("view: expected one TRACE.json, got {} (try neuronsim view --help)",
                            flags.traces.size()));
  const std::string& trace = flags.traces[0];
  const std::string output = valueOr(flags.outputOption, flags.output, defaultOutput(trace));
  isa::OutputSet outputs;
  outputs.addInput(fmt::format("trace {}", trace), trace);
  outputs.add("-o", output);
  const traces::TraceModel model = traces::loadTraceModel(trace);
  outputs.write(output, [&](const std::string& to) {
    isa::writeFileDirectly(to, traces::viewerHtml(model, trace));
  });
  outputs.commit();
  std::printf("wrote %s\n", output.c_str());
  return 0;
}

}  // namespace

Command addViewCommand(CLI::App& app) {
  CLI::App* sub = addSubcommand(app, "view", "self-contained HTML timeline of a saved trace");
  auto flags = std::make_shared<ViewFlags>();
  addPositionals(sub, "TRACE.json", flags->traces, "a trace written by run --trace or asm --trace");
  flags->outputOption =
      addValue(sub, "-o,--output", flags->output,
               "the HTML file (default: TRACE.html beside the trace)", "FILE.html");
  return {sub, [sub, flags] { return view(sub, *flags); }};
}

}  // namespace neuronsim::tools
