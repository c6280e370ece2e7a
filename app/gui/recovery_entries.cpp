#include "app/gui/recovery_entries.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "app/gui/user_files.h"
#include "core/text_format.h"

namespace attn::gui {

EntryLock::EntryLock(EntryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), file_(std::move(other.file_)) {}

EntryLock& EntryLock::operator=(EntryLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    file_ = std::move(other.file_);
  }
  return *this;
}

EntryLock::~EntryLock() { release(); }

std::optional<EntryLock> EntryLock::take(const std::filesystem::path& lock_file, bool must_be_new) {
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (must_be_new ? O_EXCL : 0);
  EntryLock lock;
  lock.fd_ = ::open(lock_file.c_str(), flags, 0600);
  if (lock.fd_ < 0) return std::nullopt;
  lock.file_ = lock_file;
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(std::exchange(lock.fd_, -1));  // its holder keeps its file
    errno = EWOULDBLOCK;
    return std::nullopt;
  }
  // Deleted by a holder letting go for good between the open and the flock: this lock would guard nothing.
  struct stat held {
  }, named{};
  if (::fstat(lock.fd_, &held) != 0 || ::stat(lock_file.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
      held.st_dev != named.st_dev) {
    ::close(std::exchange(lock.fd_, -1));
    errno = EWOULDBLOCK;  // as if another holder had it
    return std::nullopt;
  }
  return lock;
}

void EntryLock::release() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

void EntryLock::remove() {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());
  release();
}

void RecoveryEntry::remove() {
  if (!lock.held()) return;  // not this window's to delete
  std::error_code ec;
  std::filesystem::remove(file, ec);
  lock.remove();
}

std::filesystem::path recovery_folder(const std::filesystem::path& config) { return config / "recovery"; }
std::filesystem::path legacy_recovery_file(const std::filesystem::path& config) { return config / "recovery.json"; }

namespace {

std::filesystem::path lock_of(const std::filesystem::path& entry) { return entry.native() + ".lock"; }

}  // namespace

RecoveryEntry make_own_entry(const std::filesystem::path& config) {
  const std::filesystem::path folder = recovery_folder(config);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw std::runtime_error("cannot make " + shown_path(folder) + ": " + ec.message());
  const std::string stem = "window-" + std::to_string(::getpid());
  // A name taken (by the entry of an earlier window of the same process id, or of a start deleting a lock left
  // behind) is passed over: the next one is tried.
  for (int n = 1; n <= 1000; ++n) {
    RecoveryEntry own{folder / (stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json"), {}};
    if (std::filesystem::exists(std::filesystem::symlink_status(own.file, ec))) continue;
    std::optional<EntryLock> lock = EntryLock::take(lock_of(own.file), true);
    if (!lock) {
      if (errno == EEXIST || errno == EWOULDBLOCK) continue;
      throw std::runtime_error("cannot make a lock file in " + shown_path(folder) + ": " + std::strerror(errno));
    }
    own.lock = std::move(*lock);
    return own;
  }
  throw std::runtime_error("no free entry name in " + shown_path(folder));
}

namespace {

// The entries that may be of windows that are gone: the legacy file, then the folder's by name. A lock file whose
// entry is missing and whose lock is free is deleted on the way (a window that ended with nothing unsaved).
std::vector<std::filesystem::path> recovery_candidates(const std::filesystem::path& config) {
  std::vector<std::filesystem::path> entries, rest;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(legacy_recovery_file(config), ec)))
    entries.push_back(legacy_recovery_file(config));
  for (std::filesystem::directory_iterator it(recovery_folder(config), ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    const std::string name = p.filename().string();
    if (name.empty() || name[0] == '.') continue;  // an atomic write's temporary file
    if (p.extension() == ".json") {
      rest.push_back(p);
    } else if (p.extension() == ".lock") {
      const std::filesystem::path entry = p.parent_path() / p.stem();
      std::error_code missing;
      if (std::filesystem::exists(std::filesystem::symlink_status(entry, missing))) continue;
      if (std::optional<EntryLock> lock = EntryLock::take(p)) {
        if (!std::filesystem::exists(std::filesystem::symlink_status(entry, missing))) lock->remove();
      }
    }
  }
  std::sort(rest.begin(), rest.end());
  entries.insert(entries.end(), rest.begin(), rest.end());
  return entries;
}

}  // namespace

OrphanedWork take_orphaned_work(const std::filesystem::path& config, std::int64_t budget) {
  OrphanedWork found;
  for (const std::filesystem::path& file : recovery_candidates(config)) {
    std::optional<EntryLock> lock = EntryLock::take(lock_of(file));
    if (!lock) continue;  // a live window's, or being settled by another start
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {  // settled meanwhile
      lock->remove();
      continue;
    }
    FoundRecovery read = find_recovery(file, budget);
    if (found.message.empty()) found.message = read.message;
    if (read.offer) {
      found.offer = std::move(read.offer);
      found.entry = {file, std::move(*lock)};
      return found;
    }
    if (!read.stuck) lock->remove();  // moved aside: nothing is left to guard
  }
  return found;
}

}  // namespace attn::gui
