#pragma once
// An in-memory file with a path, for fuzzing readers that take a file name.

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace neuronsim::fuzz {

/// A memfd whose whole content each input replaces; path() opens it afresh from the start.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("neuronsim-fuzz", 0)) {
    if (fd_ < 0) std::abort();
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  /// Replaces the content with the `size` bytes at `data`; returns the path to read.
  const std::string& write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }
  /// The path that opens the file (its content as last written).
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_ = fmt::format("/proc/self/fd/{}", fd_);
};

}  // namespace neuronsim::fuzz
