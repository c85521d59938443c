#pragma once
// A sweep's progress on a stream: a bar redrawn in place on a terminal, else one plain line per
// finished configuration (for logs and batch schedulers).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace neuronsim::kernels {

class SweepProgress {
 public:
  /// `total` configurations will finish; the bar is drawn when `out` is a terminal.
  SweepProgress(std::FILE* out, int64_t total);
  /// One configuration finished: `label` names it ("tile=64 bufs=2"), `outcome` says how
  /// ("12.345 us" or "failed: <reason>").
  void finished(const std::string& label, bool ok, const std::string& outcome);
  /// Ends the bar's line (nothing in line mode).
  void close();

 private:
  void drawBar();

  std::FILE* out_;
  int64_t total_, done_ = 0, failed_ = 0;
  bool bar_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace neuronsim::kernels
