#pragma once
// Runs jobs in forked child processes, a few at a time: each job gets a fresh process (fresh
// SystemC state, its own peak memory), and a crash fails that job alone.

#include <cstdint>
#include <functional>
#include <string>

namespace neuronsim::kernels {

/// What one child reported and cost.
struct ChildOutcome {
  bool ok = false;           ///< the child exited 0 after writing its text
  std::string text;          ///< what the job returned (ok), or why it failed
  double hostSeconds = 0;    ///< wall-clock seconds from fork to exit
  int64_t peakRssBytes = 0;  ///< the child's peak resident set
};

/// Runs job(i) for i in [0, count) in child processes, at most `jobs` at once, and calls
/// done(i, outcome) in the parent as each finishes (in completion order). A job's exception
/// becomes a failed outcome with its message; a child killed by a signal fails with
/// "crashed (signal N)". Contract: the parent must be single-threaded when it calls this.
void runInChildren(int64_t count, int jobs, const std::function<std::string(int64_t)>& job,
                   const std::function<void(int64_t, const ChildOutcome&)>& done);

/// Local cores (at least 1).
int localCores();

}  // namespace neuronsim::kernels
