// Progress bar or progress lines for neuronsim sweep.
#include "kernels/sweep/sweep_progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace neuronsim::kernels {

namespace {

constexpr int kBarWidth = 30;

}  // namespace

SweepProgress::SweepProgress(std::FILE* out, int64_t total)
    : out_(out), total_(total), bar_(::isatty(::fileno(out)) == 1) {
  if (bar_ && total_ > 0) drawBar();
}

void SweepProgress::finished(const std::string& label, bool ok, const std::string& outcome) {
  ++done_;
  if (!ok) ++failed_;
  if (bar_) {
    drawBar();
  } else {
    fmt::print(out_, "sweep: {}/{} {}: {}\n", done_, total_, label, outcome);
    std::fflush(out_);
  }
}

void SweepProgress::drawBar() {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const int filled = static_cast<int>(kBarWidth * done_ / (total_ > 0 ? total_ : 1));
  const double left = done_ > 0 ? elapsed * static_cast<double>(total_ - done_) / done_ : 0;
  fmt::print(out_, "\r[{:#<{}}{:-<{}}] {}/{}{} {:.0f} s elapsed{}\033[K", "", filled, "",
             kBarWidth - filled, done_, total_,
             failed_ > 0 ? fmt::format(" ({} failed)", failed_) : "", elapsed,
             done_ > 0 ? fmt::format(", ~{:.0f} s left", left) : "");
  std::fflush(out_);
}

void SweepProgress::close() {
  if (bar_ && total_ > 0) fmt::print(out_, "\n");
}

}  // namespace neuronsim::kernels
