#pragma once
// The files a `run` or `asm` command writes: declared and checked before the run, staged after
// it, committed together (isa/file_write.h).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "isa/file_write.h"
#include "isa/memory_state.h"
#include "isa/program.h"
#include "kernels/builder/allocation_record.h"
#include "kernels/harness/progress.h"
#include "kernels/registry.h"
#include "traces/event.h"

namespace neuronsim::kernels {

/// The files asked for, by option; each absent when not asked for.
struct OutputRequest {
  std::optional<std::string> outputDir;  ///< --output-dir: DIR/NAME.npy (float32) per output tensor
  std::optional<std::string> trace;      ///< --trace: Chrome/Perfetto trace, summary embedded
  std::optional<std::string> summaryJson;  ///< --summary-json
  std::optional<std::string> csv;          ///< --csv: the instruction table
  std::optional<std::string> dumpAsm;      ///< --dump-asm: the program as text assembly
  /// The timed run must record events (for --trace or --csv).
  bool wantsEvents() const { return trace || csv; }
};

/// Declares every requested file in `set`, which checks each path now: the option files, and
/// DIR/NAME.npy for each of `outputNames`. Throws neuronsim::Error naming the option and path.
void declareOutputs(isa::OutputSet& set, const OutputRequest& request,
                    const std::vector<std::string>& outputNames);

/// What a finished run leaves to write. Pointers may be null when the matching file is not asked
/// for.
struct RunProducts {
  const isa::Program* program = nullptr;
  traces::EventLog* log = nullptr;  ///< the timed run's events (trace, csv)
  const std::vector<AllocationRecord>* allocations =
      nullptr;  ///< SBUF/PSUM occupancy tracks in the trace
  const std::vector<isa::UninitializedRead>* uninitializedReads = nullptr;  ///< listed in the trace
  const nlohmann::json* summary = nullptr;
  const HostTensors* outputs = nullptr;
};

/// Stages every requested file, then commits them all at once; prints "wrote DIR/NAME.npy" for
/// each output tensor. `progress` (optional) names the long phases.
void writeOutputs(isa::OutputSet& set, const OutputRequest& request, const RunProducts& products,
                  ProgressMonitor* progress = nullptr);

}  // namespace neuronsim::kernels
