#pragma once
// How every file the lab produces is written (scenario and model saves, settings, recovery, exports, pictures,
// --dump-state): into a temporary file of its own beside the target, then renamed over it, so that a failure never
// leaves half a file where a good one was. And the command line's standard output, whose first error is kept so
// that a full disk or a closed pipe is reported with its reason.
//
// The temporary file is ".NAME.XXXXXX" in the target's folder, created exclusively (O_EXCL | O_NOFOLLOW: never
// through a link, never over a file that is there), written whole, fsync'd, given the target's permission bits
// and renamed over the target. A target that is a symbolic link is followed: the link's target is replaced and
// the link kept (as editors do). A target that exists and is not a regular file (/dev/null, a pipe) is written
// directly, as the shell's > would. Every failure throws InputError (field "") with strerror of the first error.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_format.h"  // shown_path, for the messages of the writes

namespace attn {

// A std::streambuf over a file descriptor: writes whole buffers (again after EINTR and short writes) and keeps the
// errno of the first write that failed (0 while none has); after it, every write fails. On a terminal each line is
// written when it ends, as stdio does (train's steps appear as they are made). It does not close `fd`.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd = -1);
  FdStreamBuf(const FdStreamBuf&) = delete;
  FdStreamBuf& operator=(const FdStreamBuf&) = delete;
  ~FdStreamBuf() override;
  int error() const { return error_; }
  void attach(int fd);

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool send(const char* data, std::size_t size);
  bool drain();
  int fd_;
  int error_ = 0;
  bool by_line_ = false;
  std::vector<char> buffer_;
  std::size_t used_ = 0;
};

// Keep: an export that takes a fresh name never replaces a file that appeared under it meanwhile (EEXIST).
enum class Existing { Replace, Keep };

// One file being written. Without commit() (an exception, a failed write) the temporary file is removed and the
// target is as it was.
class AtomicFile {
 public:
  // Checks the target (check_output_path) and creates the temporary file. Throws InputError.
  explicit AtomicFile(const std::filesystem::path& path, Existing existing = Existing::Replace);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  std::ostream& stream() { return stream_; }
  // Flushes, fsyncs, gives the file the target's permission bits and renames it over the target. Throws InputError.
  void commit();

 private:
  [[noreturn]] void fail(int error);
  void discard();

  std::filesystem::path shown_;      // the path as given, for messages
  std::filesystem::path target_;     // the link's target for a symbolic link
  std::filesystem::path temporary_;  // empty when the target is written directly (a device, a pipe)
  Existing existing_;
  bool keep_mode_ = false;  // the target exists: the file takes its mode, owner and group
  mode_t mode_ = 0;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int fd_ = -1;
  FdStreamBuf buffer_;
  std::ostream stream_;
};

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           Existing existing = Existing::Replace);
// `write` streams the contents into the temporary file (a big output never held whole).
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                           Existing existing = Existing::Replace);

// What the atomic write would refuse, checked before long work starts (training checks --save before the first
// step): an empty name, a folder, a folder that does not exist or cannot be written in, a file that cannot be
// written. Throws InputError.
void check_output_path(const std::filesystem::path& path);

// Whether writing `output` would replace `input`: the same file (also through a link or another spelling of the
// path) when both exist, else the same path text.
bool same_file(const std::filesystem::path& output, const std::filesystem::path& input);

// Whether writing `output` would write into `folder` or one of its subfolders (links followed; a folder that does
// not exist holds nothing).
bool inside_folder(const std::filesystem::path& output, const std::filesystem::path& folder);

}  // namespace attn
