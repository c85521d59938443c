#pragma once
// Writing output files: every output of a command checked before the work, staged in temporary
// files, then committed together or not at all. The one place that writes files atomically.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neuronsim::isa {

/// The output files of one command.
/// Contract: add() each output before the work starts (the path is checked then); after the
/// work, write each output's content to the file stage() names; commit() then puts every output in
/// place. Without commit() (an error, an exception) the destructor removes every temporary and
/// every directory it created; SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporaries too.
/// A regular file (or a new one) is replaced by rename, through symbolic links to the file they
/// name; a character device or FIFO (/dev/null, a pipe, paths under /dev and /proc) is written in
/// place at commit; a directory, socket or block device is refused, and so are two outputs that
/// name one file.
class OutputSet {
 public:
  OutputSet();
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// Declares the output `path` that `option` (e.g. "--trace") names. Throws neuronsim::Error
  /// "<option> <path>: <problem>" when its directory is missing (and not declared by
  /// addDirectory), it cannot be written, it is a directory, socket or block device, or another
  /// output names the same file.
  void add(const std::string& option, const std::string& path);
  /// Declares the input file `path` (`who` names it in messages, e.g. "trace t.json"), before the
  /// outputs: an output that names the same existing file is refused by add().
  void addInput(const std::string& who, const std::string& path);
  /// Declares `dir` (an existing directory, or one to create at stage time) for outputs added
  /// inside it, as `--output-dir` does. Throws when `dir` exists and is not a directory, or cannot
  /// be created.
  void addDirectory(const std::string& option, const std::string& dir);
  /// A fresh temporary file to write `path`'s content to; `path` must have been added.
  std::string stage(const std::string& path);
  /// Stages `path` and fills the temporary with `write`; an error that names the temporary is
  /// rethrown naming `path`.
  void write(const std::string& path,
             const std::function<void(const std::string& temporary)>& write);
  /// Puts every staged output in place: in-place writes first, then renames (undone if one
  /// fails). Outputs added but never staged are left alone. Throws neuronsim::Error on failure.
  void commit();

 private:
  struct Output;
  const Output& find(const std::string& path) const;
  void removeStaged();
  void discard();

  std::vector<Output> outputs_;
  std::vector<std::pair<std::string, std::string>> inputs_;  ///< who, device:inode
  std::vector<std::string> declaredDirs_;                    ///< addDirectory() paths, as given
  std::vector<std::string> createdDirs_;                     ///< created by stage(), deepest last
  bool committed_ = false;
};

/// Writes one file atomically: `write` fills a temporary path, which then replaces `path`
/// (OutputSet rules for special files). Throws neuronsim::Error naming `path`.
void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& temporary)>& write);
/// writeAtomically with `content` as the file's bytes.
void writeFileAtomically(const std::string& path, std::string_view content);

/// Writes `content` to `path` (created or truncated) directly; throws neuronsim::Error naming it.
/// For writers that fill a temporary path from stage() or writeAtomically().
void writeFileDirectly(const std::string& path, std::string_view content);

}  // namespace neuronsim::isa
