// Output files staged in temporaries and committed together; temporaries removed on fatal signals.
#include "isa/file_write.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "isa/error.h"

namespace neuronsim::isa {

namespace fs = std::filesystem;

namespace {

// 1. Temporaries the signal handler removes: fixed slots, so the handler only reads plain memory.

constexpr size_t kSlots = 256;
constexpr size_t kSlotPathBytes = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  char path[kSlotPathBytes];
};
std::array<Slot, kSlots> gSlots;
constexpr int kCleanedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};

extern "C" void removeTemporariesAndDie(int signal) {
  for (Slot& slot : gSlots)
    if (slot.state.load() == kLive) ::unlink(slot.path);
  ::raise(signal);  // SA_RESETHAND restored the default action: dies once the handler returns
}

void installSignalCleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal : kCleanedSignals) {
      struct sigaction old {};
      if (::sigaction(signal, nullptr, &old) != 0 || old.sa_handler != SIG_DFL)
        continue;  // keep nohup's SIG_IGN
      struct sigaction action {};
      action.sa_handler = removeTemporariesAndDie;
      action.sa_flags = SA_RESETHAND;
      sigemptyset(&action.sa_mask);
      ::sigaction(signal, &action, nullptr);
    }
  });
}

/// Claims a slot for `path`; -1 when the path is too long or every slot is taken.
int registerTemporary(const std::string& path) {
  if (path.size() >= kSlotPathBytes) return -1;
  for (size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!gSlots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(gSlots[i].path, path.c_str(), path.size() + 1);
    gSlots[i].state.store(kLive);
    return static_cast<int>(i);
  }
  return -1;
}

void unregisterTemporary(int slot) {
  if (slot >= 0) gSlots[static_cast<size_t>(slot)].state.store(kFree);
}

// 2. Paths.

std::string errnoText() {
  return std::strerror(errno);
}

/// The file a path finally names after following symbolic links (the last one may dangle).
fs::path followLinks(const fs::path& path, const std::string& who) {
  fs::path at = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    const fs::path link = fs::read_symlink(at);
    at = link.is_absolute() ? link : at.parent_path() / link;
  }
  throw Error(fmt::format("{}: too many levels of symbolic links", who));
}

/// The absolute path with symbolic links of its existing part resolved (for comparing paths).
std::string canonicalText(const fs::path& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute.lexically_normal() : canonical).string();
}

bool pathExists(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// Where outputs written in place are staged.
fs::path stagingDirectory() {
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec);
  return ec ? fs::path("/tmp") : dir;
}

bool underSpecialTree(const fs::path& path) {
  std::error_code ec;
  const std::string text = fs::absolute(path, ec).lexically_normal().string();
  return text.rfind("/dev/", 0) == 0 || text.rfind("/proc/", 0) == 0;
}

/// A new, empty file beside `target` (in `dir`) named after it; registered for signal cleanup.
std::string createTemporary(const fs::path& dir, const fs::path& target, int& slot) {
  static std::atomic<int> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path candidate = dir / fmt::format(".{}.neuronsim-{}-{}.tmp",
                                                 target.filename().string(), ::getpid(), counter++);
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw Error(fmt::format("cannot write '{}': cannot create a temporary in '{}': {}",
                              target.string(), dir.string(), errnoText()));
    }
    ::close(fd);
    slot = registerTemporary(candidate.string());
    return candidate.string();
  }
  throw Error(fmt::format("cannot write '{}': no free temporary name in '{}'", target.string(),
                          dir.string()));
}

/// Appends the file `from` to `to` (a device or FIFO); throws neuronsim::Error with the reason.
void copyInto(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error(errnoText());
  const int out = ::open(to.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (out < 0) {
    const std::string why = errnoText();
    ::close(in);
    throw Error(why);
  }
  std::array<char, 1 << 16> buffer;
  std::string failure;
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failure = errnoText();
    if (n <= 0) break;
    for (ssize_t done = 0; done < n && failure.empty();) {
      const ssize_t w = ::write(out, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) failure = errnoText();
      done += w > 0 ? w : 0;
    }
    if (!failure.empty()) break;
  }
  ::close(in);
  if (::close(out) != 0 && failure.empty()) failure = errnoText();
  if (!failure.empty()) throw Error(failure);
}

}  // namespace

// 3. The output set.

struct OutputSet::Output {
  std::string path;      ///< as given
  std::string who;       ///< "--trace t.json" for messages
  fs::path target;       ///< the file that receives the content
  bool inPlace = false;  ///< device or FIFO: written at commit, not renamed
  std::string identity;  ///< device:inode of an existing file, else the absolute target path
  std::string staged;    ///< the temporary, once staged
  int slot = -1;
};

OutputSet::OutputSet() {
  installSignalCleanup();
}

OutputSet::~OutputSet() {
  if (!committed_) discard();
}

void OutputSet::addDirectory(const std::string& option, const std::string& dir) {
  const std::string who = option.empty() ? dir : fmt::format("{} {}", option, dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: exists and is not a directory", who));
    if (::access(dir.c_str(), W_OK) != 0)
      throw Error(fmt::format("{}: cannot write: {}", who, errnoText()));
  } else {
    fs::path ancestor = fs::path(canonicalText(dir));
    while (!ancestor.empty() && ::stat(ancestor.c_str(), &st) != 0)
      ancestor = ancestor.parent_path();
    if (!S_ISDIR(st.st_mode))
      throw Error(
          fmt::format("{}: cannot be created: '{}' is not a directory", who, ancestor.string()));
    if (::access(ancestor.c_str(), W_OK) != 0)
      throw Error(
          fmt::format("{}: cannot be created in '{}': {}", who, ancestor.string(), errnoText()));
  }
  declaredDirs_.push_back(canonicalText(dir));
}

void OutputSet::add(const std::string& option, const std::string& path) {
  Output out;
  out.path = path;
  out.who = option.empty() ? path : fmt::format("{} {}", option, path);
  if (path.empty()) throw Error(fmt::format("{}: needs a file name", option));
  out.target = followLinks(path, out.who);
  struct stat st {};
  const bool exists = ::stat(out.target.c_str(), &st) == 0;
  if (exists) {
    if (S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: is a directory", out.who));
    if (S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode))
      throw Error(fmt::format("{}: is a {}; give a file path", out.who,
                              S_ISSOCK(st.st_mode) ? "socket" : "block device"));
    out.inPlace = S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || underSpecialTree(path);
    out.identity = fmt::format("{}:{}", st.st_dev, st.st_ino);
    if (!out.inPlace && ::access(out.target.c_str(), W_OK) != 0)
      throw Error(fmt::format("{}: cannot write: {}", out.who, errnoText()));
  } else {
    if (underSpecialTree(path)) throw Error(fmt::format("{}: no such device or file", out.who));
    out.identity = canonicalText(out.target);
  }
  if (!out.inPlace) {
    const fs::path parent =
        out.target.parent_path().empty() ? fs::path(".") : out.target.parent_path();
    const std::string canonicalParent = canonicalText(parent);
    bool declared = false;
    for (const std::string& d : declaredDirs_) declared = declared || d == canonicalParent;
    struct stat ps {};
    if (::stat(parent.c_str(), &ps) != 0) {
      if (!declared)
        throw Error(fmt::format("{}: directory '{}' does not exist", out.who, parent.string()));
    } else if (!S_ISDIR(ps.st_mode)) {
      throw Error(fmt::format("{}: '{}' is not a directory", out.who, parent.string()));
    } else if (::access(parent.c_str(), W_OK) != 0) {
      throw Error(
          fmt::format("{}: cannot write in '{}': {}", out.who, parent.string(), errnoText()));
    }
  }
  for (const Output& other : outputs_)
    if (other.identity == out.identity)
      throw Error(fmt::format("{} and {} name the same file", other.who, out.who));
  for (const auto& [who, identity] : inputs_)
    if (identity == out.identity)
      throw Error(fmt::format("{} and {} name the same file", who, out.who));
  outputs_.push_back(std::move(out));
}

void OutputSet::addInput(const std::string& who, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    inputs_.emplace_back(who, fmt::format("{}:{}", st.st_dev, st.st_ino));
}

const OutputSet::Output& OutputSet::find(const std::string& path) const {
  for (const Output& out : outputs_)
    if (out.path == path) return out;
  throw Error(fmt::format("internal: output '{}' was not declared", path));
}

std::string OutputSet::stage(const std::string& path) {
  auto& out = const_cast<Output&>(find(path));
  if (!out.staged.empty()) throw Error(fmt::format("internal: output '{}' staged twice", path));
  fs::path dir = out.inPlace ? stagingDirectory() : out.target.parent_path();
  if (dir.empty()) dir = ".";
  if (!out.inPlace && !pathExists(dir)) {
    std::vector<fs::path> missing;
    for (fs::path p = fs::path(canonicalText(dir)); !p.empty() && !pathExists(p);
         p = p.parent_path())
      missing.push_back(p);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST)
        throw Error(fmt::format("{}: cannot create directory '{}': {}", out.who, it->string(),
                                errnoText()));
      createdDirs_.push_back(it->string());
    }
  }
  out.staged = createTemporary(dir, out.target, out.slot);
  return out.staged;
}

void OutputSet::write(const std::string& path,
                      const std::function<void(const std::string& temporary)>& write) {
  const std::string temporary = stage(path);
  try {
    write(temporary);
  } catch (const Error& e) {
    std::string message = e.what();
    for (size_t at = message.find(temporary); at != std::string::npos;
         at = message.find(temporary, at + path.size()))
      message.replace(at, temporary.size(), path);
    throw Error(message);
  }
}

void OutputSet::commit() {
  committed_ = true;  // every path below cleans up after itself
  // 1. In-place outputs (devices, FIFOs) first: if one fails, no file has been touched yet.
  std::fflush(stdout);  // an output that is our own stdout comes after what was printed
  for (Output& out : outputs_) {
    if (out.staged.empty() || !out.inPlace) continue;
    try {
      copyInto(out.staged, out.path);
    } catch (const Error& e) {
      discard();
      throw Error(fmt::format("{}: cannot write: {}", out.who, e.what()));
    }
  }
  // 2. Renames, with a hard-link backup of each replaced file so a failure part-way is undone.
  std::vector<std::string> backups(outputs_.size());
  std::vector<int> backupSlots(outputs_.size(), -1);
  std::vector<bool> existed(outputs_.size(), false), renamed(outputs_.size(), false);
  std::string failure;
  for (size_t i = 0; i < outputs_.size() && failure.empty(); ++i) {
    Output& out = outputs_[i];
    if (out.staged.empty() || out.inPlace) continue;
    existed[i] = pathExists(out.target);
    const std::string backup = fmt::format("{}.old", out.staged);
    if (existed[i] && ::link(out.target.c_str(), backup.c_str()) == 0) {
      backups[i] = backup;
      backupSlots[i] = registerTemporary(backup);
    }
    if (::rename(out.staged.c_str(), out.target.c_str()) != 0) {
      failure = fmt::format("{}: cannot write: {}", out.who, errnoText());
      break;
    }
    renamed[i] = true;
    unregisterTemporary(out.slot);
    out.slot = -1;
    out.staged.clear();
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (!failure.empty() && renamed[i] && !backups[i].empty()) {
      ::rename(backups[i].c_str(), outputs_[i].target.c_str());
    } else if (!failure.empty() && renamed[i] && !existed[i]) {
      ::unlink(outputs_[i].target.c_str());
    }
    if (!backups[i].empty()) ::unlink(backups[i].c_str());
    unregisterTemporary(backupSlots[i]);
  }
  if (!failure.empty()) {
    discard();
    throw Error(failure);
  }
  removeStaged();
}

void OutputSet::removeStaged() {
  for (Output& out : outputs_) {
    if (!out.staged.empty()) ::unlink(out.staged.c_str());
    unregisterTemporary(out.slot);
    out.slot = -1;
    out.staged.clear();
  }
}

void OutputSet::discard() {
  removeStaged();
  for (auto it = createdDirs_.rbegin(); it != createdDirs_.rend(); ++it) ::rmdir(it->c_str());
  createdDirs_.clear();
}

// 4. One-file helpers.

void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& temporary)>& write) {
  OutputSet set;
  set.add("", path);
  set.write(path, write);
  set.commit();
}

void writeFileAtomically(const std::string& path, std::string_view content) {
  writeAtomically(path,
                  [&](const std::string& temporary) { writeFileDirectly(temporary, content); });
}

void writeFileDirectly(const std::string& path, std::string_view content) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw Error(fmt::format("cannot write '{}': {}", path, errnoText()));
  const bool wrote = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  const std::string why = wrote ? "" : errnoText();
  if (std::fclose(file) != 0 || !wrote)
    throw Error(fmt::format("cannot write '{}': {}", path, wrote ? errnoText() : why));
}

}  // namespace neuronsim::isa
