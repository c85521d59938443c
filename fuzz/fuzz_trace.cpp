// libFuzzer target: the trace reader and what `report` and `diff` make of a loaded trace.
#include <cstdint>

#include "fuzz/memory_file.h"
#include "isa/error.h"
#include "traces/diff.h"
#include "traces/report.h"
#include "traces/trace_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace neuronsim;
  static fuzz::MemoryFile file;
  try {
    const traces::TraceModel model = traces::loadTraceModel(file.write(data, size));
    traces::reportText(model);
    traces::diffText(traces::diffTraces(model, model), "a", "b");
  } catch (const Error&) {
  }
  return 0;
}
