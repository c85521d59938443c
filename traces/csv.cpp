// CSV export of the instruction table.
#include "traces/csv.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "isa/error.h"
#include "isa/file_write.h"

namespace neuronsim::traces {

namespace {

void field(std::string& out, std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    out.append(text);
    return;
  }
  out.push_back('"');
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  }
  out.push_back('"');
}

void number(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void number(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

std::string instructionCsv(const TraceModel& model) {
  std::vector<size_t> order(model.spans.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Span &x = model.spans[a], &y = model.spans[b];
    return x.startNs != y.startNs ? x.startNs < y.startNs : x.index < y.index;
  });
  std::string out = kCsvHeader;
  out.push_back('\n');
  for (size_t i : order) {
    const Span& s = model.spans[i];
    out.append(s.isDma ? "dma," : "instruction,");
    number(out, s.index);
    out.push_back(',');
    field(out, s.track);
    out.push_back(',');
    field(out, s.opcode);
    for (double v : {s.readyNs, s.startNs, s.endNs, s.endNs - s.startNs, s.stallNs}) {
      out.push_back(',');
      number(out, v);
    }
    out.push_back(',');
    field(out, s.stallCause);
    out.push_back(',');
    field(out, s.semaphore);
    for (int64_t v : {s.waitValue, s.waitedOn, s.cycles, s.bytes, s.flops, s.bytesPerPartition}) {
      out.push_back(',');
      number(out, v);
    }
    out.push_back(',');
    field(out, s.assembly);
    out.push_back('\n');
  }
  return out;
}

void writeInstructionCsv(const std::string& path, const TraceModel& model) {
  isa::writeFileDirectly(path, instructionCsv(model));
}

void writeInstructionCsv(const std::string& path, const isa::Program& program,
                         const EventLog& log) {
  writeInstructionCsv(path, traceModel(program, log));
}

}  // namespace neuronsim::traces
