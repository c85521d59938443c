#pragma once
// Prints a progress line to a stream when a phase of a long run takes more than a few seconds.

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace neuronsim::kernels {

/// Contract: phase() may be called from the running thread at any time; a background thread
/// prints "neuronsim: <phase> (N s)" once a phase has run `afterSeconds`, then every
/// `everySeconds`. Silent for short runs.
class ProgressMonitor {
 public:
  explicit ProgressMonitor(std::FILE* out, double afterSeconds = 3.0, double everySeconds = 10.0);
  ~ProgressMonitor();
  ProgressMonitor(const ProgressMonitor&) = delete;
  ProgressMonitor& operator=(const ProgressMonitor&) = delete;

  /// Starts timing phase `name` (ends the previous one).
  void phase(const std::string& name);
  /// Ends the current phase.
  void done();

 private:
  void loop();
  std::FILE* out_;
  double afterSeconds_, everySeconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string phase_;
  std::chrono::steady_clock::time_point started_;
  double nextReportSeconds_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace neuronsim::kernels
