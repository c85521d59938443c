// Fork, pipe and wait4 around each job.
#include "kernels/sweep/child_pool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "isa/error.h"

namespace neuronsim::kernels {

namespace {

using Clock = std::chrono::steady_clock;

/// First byte of a child's report: the job returned, or threw.
constexpr char kReturned = 'R';
constexpr char kThrew = 'E';

struct Child {
  int64_t job = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string data;
  Clock::time_point started;
};

void writeAll(int fd, const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

[[noreturn]] void childMain(int fd, int64_t job, const std::function<std::string(int64_t)>& work) {
  std::string report;
  try {
    report = fmt::format("{}{}", kReturned, work(job));
  } catch (const std::exception& e) {
    report = fmt::format("{}{}", kThrew, e.what());
  }
  writeAll(fd, report);
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(0);
}

Child start(int64_t job, const std::function<std::string(int64_t)>& work) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw Error(fmt::format("sweep: cannot create a pipe: {}", strerror(errno)));
  std::fflush(nullptr);
  const Clock::time_point started = Clock::now();  // before: the child may run first
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("sweep: cannot fork: {}", strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    childMain(fds[1], job, work);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  return Child{job, pid, fds[0], {}, started};
}

ChildOutcome finish(Child& child) {
  ::close(child.fd);
  int status = 0;
  rusage usage{};
  while (::wait4(child.pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  ChildOutcome outcome;
  outcome.hostSeconds = std::chrono::duration<double>(Clock::now() - child.started).count();
  outcome.peakRssBytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  if (WIFSIGNALED(status)) {
    outcome.text = fmt::format("crashed (signal {})", WTERMSIG(status));
  } else if (child.data.empty() || WEXITSTATUS(status) != 0) {
    outcome.text = fmt::format("exited with status {} and no result", WEXITSTATUS(status));
  } else {
    outcome.ok = child.data[0] == kReturned;
    outcome.text = child.data.substr(1);
  }
  return outcome;
}

}  // namespace

void runInChildren(int64_t count, int jobs, const std::function<std::string(int64_t)>& job,
                   const std::function<void(int64_t, const ChildOutcome&)>& done) {
  std::vector<Child> running;
  int64_t next = 0;
  const size_t width = static_cast<size_t>(jobs < 1 ? 1 : jobs);
  while (next < count || !running.empty()) {
    while (next < count && running.size() < width) running.push_back(start(next++, job));
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("sweep: poll failed: {}", strerror(errno)));
    }
    for (size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        running[i].data.append(buffer, static_cast<size_t>(n));
        continue;
      }
      Child child = running[i];
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      done(child.job, finish(child));
    }
  }
}

int localCores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace neuronsim::kernels
