// Bounded streaming and whole-file reads.
#include "isa/file_read.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "isa/error.h"
#include "isa/size_limits.h"

namespace neuronsim::isa {

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw Error(fmt::format("{}: cannot open: it is a directory", path));
  }
  if (S_ISREG(st.st_mode)) size_ = static_cast<int64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t InputFile::read(void* data, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::read(fd_, static_cast<char*>(data) + done, bytes - done);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: read error: {}", path_, std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

std::string readTextFile(const std::string& path, int64_t maxBytes, std::string_view what) {
  InputFile file(path);
  if (file.size() && *file.size() > maxBytes)
    throw Error(fmt::format("{} '{}' is {}, over the limit of {}", what, path,
                            byteString(*file.size()), byteString(maxBytes)));
  constexpr size_t kChunk = 1 << 16;
  std::string text;
  if (file.size()) text.reserve(static_cast<size_t>(*file.size()));
  for (;;) {
    const size_t at = text.size();
    text.resize(at + kChunk);
    const size_t n = file.read(text.data() + at, kChunk);
    text.resize(at + n);
    if (text.find('\0', at) != std::string::npos)
      throw Error(fmt::format("{} '{}' is not a text file (it holds a NUL byte)", what, path));
    if (static_cast<int64_t>(text.size()) > maxBytes)
      throw Error(fmt::format("{} '{}' is over the limit of {}", what, path, byteString(maxBytes)));
    if (n < kChunk) return text;
  }
}

}  // namespace neuronsim::isa
