#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

#include "core/validate.h"

namespace attn {
namespace fs = std::filesystem;

// No put area: every character comes through overflow, so that a line on a terminal is written when it ends.
FdStreamBuf::FdStreamBuf(int fd) : buffer_(std::size_t{1} << 16) { attach(fd); }

void FdStreamBuf::attach(int fd) {
  fd_ = fd;
  by_line_ = fd >= 0 && ::isatty(fd);
}

FdStreamBuf::~FdStreamBuf() { drain(); }

bool FdStreamBuf::send(const char* data, std::size_t size) {
  if (error_) return false;
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool FdStreamBuf::drain() { return send(buffer_.data(), std::exchange(used_, 0)); }

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  // xsputn may have filled the buffer to the last byte: it is emptied before, never after, a character is put.
  if (used_ == buffer_.size() && !drain()) return traits_type::eof();
  buffer_[used_++] = traits_type::to_char_type(c);
  if (by_line_ && c == '\n' && !drain()) return traits_type::eof();
  return c;
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  const auto size = static_cast<std::size_t>(n);
  if (size > buffer_.size() - used_ && !drain()) return 0;
  if (size >= buffer_.size()) return send(s, size) ? n : 0;  // larger than the buffer: written as it is
  std::memcpy(buffer_.data() + used_, s, size);
  used_ += size;
  if (by_line_ && std::memchr(s, '\n', size) && !drain()) return 0;
  return n;
}

int FdStreamBuf::sync() { return drain() ? 0 : -1; }

namespace {

[[noreturn]] void refuse_output(const fs::path& path, const std::string& why) {
  throw InputError("", "cannot write " + shown_path(path) + ": " + why);
}

// The file a write to `path` replaces: `path`, or for a symbolic link the file it names (a link to a link is
// followed to the end, up to the kernel's 40 hops). The link's target may not exist yet.
fs::path link_target(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    if (hops == 40) refuse_output(path, std::strerror(ELOOP));
    std::error_code ec;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) refuse_output(path, ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
}

struct OutputTarget {
  fs::path file;        // where the bytes go: a link's target
  bool direct = false;  // a device or a pipe, written in place
  bool exists = false;  // a regular file is there (st is its)
  struct stat st {};
};

// The checks of check_output_path, and what the write needs to know of the target.
OutputTarget locate_output(const fs::path& path) {
  if (path.empty()) throw InputError("", "no file name given");
  OutputTarget t;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse_output(path, "it is a folder, not a file");
    if (!S_ISREG(st.st_mode)) {
      if (::access(path.c_str(), W_OK) != 0) refuse_output(path, std::strerror(errno));
      t.file = path;
      t.direct = true;
      return t;
    }
  } else if (errno != ENOENT) {
    refuse_output(path, std::strerror(errno));
  }
  t.file = link_target(path);
  const fs::path folder = t.file.parent_path().empty() ? fs::path(".") : t.file.parent_path();
  struct stat dir;
  if (::stat(folder.c_str(), &dir) != 0)
    refuse_output(path,
                  errno == ENOENT ? "the folder " + shown_path(folder) + " does not exist" : std::strerror(errno));
  if (!S_ISDIR(dir.st_mode)) refuse_output(path, shown_path(folder) + " is not a folder");
  if (::access(folder.c_str(), W_OK) != 0)
    refuse_output(path, "the folder " + shown_path(folder) + " cannot be written in (" + std::strerror(errno) + ")");
  t.exists = ::stat(t.file.c_str(), &t.st) == 0;
  // The rename would replace a file the user may not write: refused, as writing to it would be.
  if (t.exists && ::access(t.file.c_str(), W_OK) != 0) refuse_output(path, std::strerror(errno));
  return t;
}

// ".NAME.XXXXXX" beside the target, created exclusively: never through a link, never over a file already there
// (a user's own file of that name is left alone; another name is drawn). -1 with errno when it cannot be made.
// `private_file`: 0600 until commit gives it the target's mode, so a 0600 file's contents are never readable by
// others on the way; a new file is created 0666 less the umask, as any.
int create_temporary(const fs::path& target, bool private_file, fs::path& temporary) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 random(std::random_device{}() ^ static_cast<std::uint64_t>(::getpid()));
  std::string name = target.filename().native();
  if (name.size() > 200) name.resize(200);  // a name has at most 255 bytes
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string suffix(6, 'x');
    for (char& c : suffix) c = kLetters[random() % (sizeof kLetters - 1)];
    temporary = target.parent_path() / ("." + name + "." + suffix);
    const int fd =
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, private_file ? 0600 : 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST
}

// A rename that never replaces a file which appeared under the name meanwhile: RENAME_NOREPLACE, or where the file
// system has it not, a hard link; where neither is (FAT), a look just before the rename.
int rename_keeping(const char* from, const char* to) {
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1;
  if (::link(from, to) == 0) {
    ::unlink(from);
    return 0;
  }
  if (errno != EPERM && errno != ENOTSUP) return -1;
  struct stat st;
  if (::lstat(to, &st) == 0) {
    errno = EEXIST;
    return -1;
  }
  return ::rename(from, to);
}

// The rename reaches the disk too (best effort: some file systems cannot sync a folder).
void sync_folder(const fs::path& file) {
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFile::AtomicFile(const fs::path& path, Existing existing) : shown_(path), existing_(existing), stream_(&buffer_) {
  const OutputTarget t = locate_output(path);
  target_ = t.file;
  if (t.direct) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  } else {
    if (t.exists && existing == Existing::Keep) refuse_output(path, std::strerror(EEXIST));
    keep_mode_ = t.exists;
    mode_ = t.st.st_mode & 07777;
    uid_ = t.st.st_uid;
    gid_ = t.st.st_gid;
    fd_ = create_temporary(target_, t.exists, temporary_);
  }
  if (fd_ < 0) {
    temporary_.clear();
    refuse_output(path, std::strerror(errno));
  }
  buffer_.attach(fd_);
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  buffer_.attach(-1);  // what is left in the buffer never reaches another file that takes the descriptor's number
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

void AtomicFile::fail(int error) {
  discard();  // the first error is reported, not the cleanup's
  refuse_output(shown_, std::strerror(error));
}

void AtomicFile::commit() {
  stream_.flush();
  if (buffer_.error()) fail(buffer_.error());
  if (!stream_) fail(EIO);
  if (keep_mode_) {
    [[maybe_unused]] const int owned = ::fchown(fd_, uid_, gid_);  // only root may give a file away
    if (::fchmod(fd_, mode_) != 0) fail(errno);
  }
  if (!temporary_.empty() && ::fsync(fd_) != 0) fail(errno);
  buffer_.attach(-1);
  if (::close(std::exchange(fd_, -1)) != 0) fail(errno);
  if (temporary_.empty()) return;  // written in place
  const int moved = existing_ == Existing::Replace ? ::rename(temporary_.c_str(), target_.c_str())
                                                   : rename_keeping(temporary_.c_str(), target_.c_str());
  if (moved != 0) fail(errno);
  temporary_.clear();
  sync_folder(target_);
}

void write_file_atomically(const fs::path& path, std::string_view text, Existing existing) {
  AtomicFile file(path, existing);
  file.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  file.commit();
}

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write, Existing existing) {
  AtomicFile file(path, existing);
  write(file.stream());
  file.commit();
}

void check_output_path(const fs::path& path) { locate_output(path); }

bool same_file(const fs::path& output, const fs::path& input) {
  std::error_code ec;
  if (fs::exists(output, ec) && fs::exists(input, ec)) return fs::equivalent(output, input, ec);
  const fs::path a = fs::absolute(output, ec).lexically_normal(), b = fs::absolute(input, ec).lexically_normal();
  return a == b;
}

bool inside_folder(const fs::path& output, const fs::path& folder) {
  std::error_code ec;
  if (folder.empty() || !fs::is_directory(folder, ec)) return false;
  const fs::path inner = fs::weakly_canonical(fs::absolute(output, ec), ec);
  if (ec) return false;
  const fs::path outer = fs::canonical(folder, ec);
  if (ec) return false;
  // The folder's parts a prefix of the output's.
  auto o = inner.begin();
  for (auto f = outer.begin(); f != outer.end(); ++f, ++o)
    if (o == inner.end() || *o != *f) return false;
  return o != inner.end();
}

}  // namespace attn
