// Background progress lines for long builds and simulations.
#include "kernels/harness/progress.h"

namespace neuronsim::kernels {

ProgressMonitor::ProgressMonitor(std::FILE* out, double afterSeconds, double everySeconds)
    : out_(out),
      afterSeconds_(afterSeconds),
      everySeconds_(everySeconds),
      thread_([this] { loop(); }) {}

ProgressMonitor::~ProgressMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressMonitor::phase(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = name;
  started_ = std::chrono::steady_clock::now();
  nextReportSeconds_ = afterSeconds_;
}

void ProgressMonitor::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_.clear();
}

void ProgressMonitor::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_ || phase_.empty()) continue;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (elapsed < nextReportSeconds_) continue;
    std::fprintf(out_, "neuronsim: %s (%.0f s)\n", phase_.c_str(), elapsed);
    std::fflush(out_);
    nextReportSeconds_ = elapsed + everySeconds_;
  }
}

}  // namespace neuronsim::kernels
