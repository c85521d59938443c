// neuronsim report TRACE.json [--csv FILE] [--top N]: text analysis of a saved trace.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "isa/error.h"
#include "isa/file_write.h"
#include "tools/commands.h"
#include "traces/csv.h"
#include "traces/report.h"

namespace neuronsim::tools {

namespace {

struct ReportFlags {
  std::vector<std::string> traces;
  std::string csv, top;
  CLI::Option *csvOption = nullptr, *topOption = nullptr;
};

int parseTop(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(fmt::format("report: --top takes a positive integer, not '{}'", text));
  const int top = std::stoi(text);
  if (top < 1) throw Error(fmt::format("report: --top takes a positive integer, not '{}'", text));
  return top;
}

int report(const CLI::App* app, const ReportFlags& flags) {
  checkExtras(app, "report");
  if (flags.traces.size() != 1)
    throw Error(fmt::format("report: expected one TRACE.json, got {} (try neuronsim report --help)",
                            flags.traces.size()));
  const int top = parseTop(valueOr(flags.topOption, flags.top, "5"));
  isa::OutputSet outputs;
  outputs.addInput(fmt::format("trace {}", flags.traces[0]), flags.traces[0]);
  if (flags.csvOption->count()) outputs.add("--csv", flags.csv);
  const auto model = traces::loadTraceModel(flags.traces[0]);
  const std::string text = traces::reportText(model, top);
  if (flags.csvOption->count()) {
    outputs.write(flags.csv,
                  [&](const std::string& to) { traces::writeInstructionCsv(to, model); });
    outputs.commit();
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command addReportCommand(CLI::App& app) {
  CLI::App* sub = addSubcommand(app, "report", "text summary of a saved trace");
  sub->footer(
      "Prints the summary, the top N opcodes by time per engine and queue, stall time by\n"
      "cause, the critical path and warnings of a saved trace.");
  auto flags = std::make_shared<ReportFlags>();
  addPositionals(sub, "TRACE.json", flags->traces, "a trace written by run --trace or asm --trace");
  flags->csvOption =
      addValue(sub, "--csv", flags->csv, "also write the instruction table as CSV", "FILE");
  flags->topOption =
      addValue(sub, "--top", flags->top, "opcodes listed per engine and queue (default 5)", "N");
  return {sub, [sub, flags] { return report(sub, *flags); }};
}

}  // namespace neuronsim::tools
