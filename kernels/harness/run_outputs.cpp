// Staging and committing the files of a run.
#include "kernels/harness/run_outputs.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "isa/assembly.h"
#include "isa/error.h"
#include "isa/npy.h"
#include "kernels/harness/occupancy.h"
#include "kernels/harness/trace_machine.h"
#include "traces/chrome_trace.h"
#include "traces/csv.h"

namespace neuronsim::kernels {

namespace {

std::string npyPath(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / fmt::format("{}.npy", name)).string();
}

}  // namespace

void declareOutputs(isa::OutputSet& set, const OutputRequest& request,
                    const std::vector<std::string>& outputNames) {
  if (request.outputDir) set.addDirectory("--output-dir", *request.outputDir);
  for (const auto& [option, path] : {std::pair{"--trace", request.trace},
                                     {"--summary-json", request.summaryJson},
                                     {"--csv", request.csv},
                                     {"--dump-asm", request.dumpAsm}})
    if (path) set.add(option, *path);
  if (request.outputDir)
    for (const std::string& name : outputNames)
      set.add("--output-dir", npyPath(*request.outputDir, name));
}

void writeOutputs(isa::OutputSet& set, const OutputRequest& request, const RunProducts& products,
                  ProgressMonitor* progress) {
  auto needs = [](const void* product, const char* what) {
    if (!product) throw Error(fmt::format("internal: {} asked for but not produced", what));
  };
  if (request.dumpAsm) {
    needs(products.program, "--dump-asm");
    set.write(*request.dumpAsm, [&](const std::string& to) {
      isa::writeFileDirectly(to, isa::printProgram(*products.program));
    });
  }
  if (request.summaryJson) {
    needs(products.summary, "--summary-json");
    set.write(*request.summaryJson, [&](const std::string& to) {
      isa::writeFileDirectly(to, fmt::format("{}\n", products.summary->dump(2)));
    });
  }
  if (request.trace) {
    needs(products.log, "--trace");
    if (progress) progress->phase(fmt::format("writing {}", *request.trace));
    if (products.uninitializedReads)
      for (const auto& read : *products.uninitializedReads)
        products.log->uninitializedRead({read.instruction, read.operand});
    if (products.allocations) appendOccupancyCounters(*products.log, *products.allocations);
    set.write(*request.trace, [&](const std::string& to) {
      traces::writeChromeTrace(
          to, *products.program, *products.log,
          products.summary ? *products.summary : nlohmann::json::object(),
          products.machine ? traceMachine(*products.machine) : traces::MachineFacts{});
    });
    if (progress) progress->done();
  }
  if (request.csv) {
    needs(products.log, "--csv");
    set.write(*request.csv, [&](const std::string& to) {
      traces::writeInstructionCsv(to, *products.program, *products.log);
    });
  }
  std::vector<std::string> written;
  if (request.outputDir) {
    needs(products.outputs, "--output-dir");
    for (const auto& [name, tensor] : *products.outputs) {
      const std::string path = npyPath(*request.outputDir, name);
      set.write(path,
                [&](const std::string& to) { isa::writeNpyFile(to, tensor.shape, tensor.values); });
      written.push_back(path);
    }
  }
  set.commit();
  for (const std::string& path : written) std::printf("wrote %s\n", path.c_str());
}

}  // namespace neuronsim::kernels
