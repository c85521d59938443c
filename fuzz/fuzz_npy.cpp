// libFuzzer target: the streamed .npy reader, on both of its paths: a regular file (size known
// up front) and a FIFO (size unknown, data checked as it arrives). Both must accept the same
// inputs with the same values, and an accepted array must survive writeNpyFile and a re-read.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "fuzz/memory_file.h"
#include "isa/error.h"
#include "isa/npy.h"

namespace {

using neuronsim::isa::NpyArray;

/// The array readNpy makes of `path`, or nothing when it refuses with neuronsim::Error.
std::optional<NpyArray> tryRead(const std::string& path) {
  try {
    return neuronsim::isa::readNpy(path);
  } catch (const neuronsim::Error&) {
    return std::nullopt;
  }
}

/// A FIFO in a fresh private directory, removed at exit.
class Fifo {
 public:
  Fifo() {
    char dir[] = "/tmp/neuronsim-fuzz-npy-XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    dir_ = dir;
    path_ = fmt::format("{}/fifo.npy", dir_);
    if (mkfifo(path_.c_str(), 0600) != 0) std::abort();
    signal(SIGPIPE, SIG_IGN);  // the reader may stop before the writer is done
  }
  ~Fifo() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  /// readNpy on the FIFO while a thread writes the `size` bytes at `data` into it. The writer
  /// opens without blocking and retries until the reader is there, so a reader that gives up
  /// early cannot leave it waiting for ever; an open interrupted by libFuzzer's SIGALRM is retried.
  std::optional<NpyArray> read(const uint8_t* data, size_t size) {
    for (;;) {
      bool interrupted = false;
      std::optional<NpyArray> array = readOnce(data, size, interrupted);
      if (!interrupted) return array;
    }
  }

 private:
  std::optional<NpyArray> readOnce(const uint8_t* data, size_t size, bool& interrupted) {
    std::atomic<bool> readerDone = false;
    std::thread writer([&] {
      int fd = -1;
      while ((fd = open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
        if (readerDone) return;
        std::this_thread::yield();
      }
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      for (size_t done = 0; done < size;) {
        const ssize_t n = ::write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // EPIPE: the reader stopped early
        done += static_cast<size_t>(n);
      }
      close(fd);
    });
    std::optional<NpyArray> array;
    try {
      array = neuronsim::isa::readNpy(path_);
    } catch (const neuronsim::Error& e) {
      // Only the open or a read of the FIFO itself: a header may quote any text, this too.
      const std::string eintr = std::strerror(EINTR);
      interrupted = e.what() == fmt::format("{}: cannot open: {}", path_, eintr) ||
                    e.what() == fmt::format("{}: read error: {}", path_, eintr);
    }
    readerDone = true;
    writer.join();
    return array;
  }

  std::string dir_, path_;
};

bool sameArray(const NpyArray& a, const NpyArray& b) {
  return a.shape == b.shape && a.values.size() == b.values.size() &&
         (a.values.empty() ||
          std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static neuronsim::fuzz::MemoryFile file;
  static Fifo fifo;
  const std::optional<NpyArray> fromFile = tryRead(file.write(data, size));
  const std::optional<NpyArray> fromStream = fifo.read(data, size);
  if (fromFile.has_value() != fromStream.has_value()) std::abort();
  if (!fromFile) return 0;
  if (!sameArray(*fromFile, *fromStream)) std::abort();
  neuronsim::isa::writeNpyFile(file.write(nullptr, 0), fromFile->shape, fromFile->values);
  const std::optional<NpyArray> reread = tryRead(file.path());
  if (!reread || !sameArray(*fromFile, *reread)) std::abort();
  return 0;
}
