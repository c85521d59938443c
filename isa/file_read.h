#pragma once
// Reading input files: streaming reads with the size known up front where the file has one, and
// whole-file text reads bounded before anything is allocated. The one place that reads files.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace neuronsim::isa {

/// An input file opened for streaming reads (a regular file, a FIFO or a device).
class InputFile {
 public:
  /// Opens `path`; throws neuronsim::Error "<path>: cannot open: <reason>" (a directory too).
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  /// Size in bytes of a regular file; nothing for a pipe, FIFO or device.
  std::optional<int64_t> size() const { return size_; }
  /// Reads up to `bytes` bytes into `data`; fewer only at the end of the file. Throws on an I/O
  /// error.
  size_t read(void* data, size_t bytes);

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<int64_t> size_;
};

/// The whole content of the text file `path`. A regular file larger than `maxBytes` is refused
/// before it is read, a stream when it passes `maxBytes`: neuronsim::Error "<what> '<path>' is
/// 5.0 GiB, over the limit of 1.0 GiB". A NUL byte (binary data, /dev/zero) is refused as soon as
/// it is read.
std::string readTextFile(const std::string& path, int64_t maxBytes, std::string_view what);

}  // namespace neuronsim::isa
