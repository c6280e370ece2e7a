#pragma once
// One recovery entry per running window, in the config folder's recovery/ (user_files.h's config_dir()):
// window-<pid>.json (window-<pid>-2.json, ... when a name is taken), in write_recovery's format, beside its lock
// file window-<pid>.json.lock, held with flock(2) for the window's life. The kernel lets go of the lock when the
// window ends however it ends, so an entry whose lock is free is the work of a window that is gone (crashed or
// killed): a start takes it under its lock (two windows started at once never both take it) and offers it; a live
// window's entry is never offered. The single recovery.json of earlier versions, in the config folder itself, is
// read as one more entry (its lock recovery.json.lock).
#include <filesystem>
#include <optional>
#include <string>

#include "core/memory_budget.h"
#include "ui/logic/app_state.h"

namespace attn::gui {

// A lock file held with flock(2) until destroyed (or remove()d). Movable, not copyable.
class EntryLock {
 public:
  EntryLock() = default;
  EntryLock(EntryLock&& other) noexcept;
  EntryLock& operator=(EntryLock&& other) noexcept;
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;
  ~EntryLock();
  // Takes the lock of `lock_file` without waiting, creating the file (`must_be_new`: only a file it creates itself);
  // nullopt when another holder has it, when it was deleted meanwhile, or when it cannot be made.
  static std::optional<EntryLock> take(const std::filesystem::path& lock_file, bool must_be_new = false);
  bool held() const { return fd_ >= 0; }
  // Lets go, leaving the lock file (a crash does the same).
  void release();
  // Deletes the lock file while still holding it, then lets go: an entry settled for good leaves nothing behind.
  void remove();

 private:
  int fd_ = -1;
  std::filesystem::path file_;
};

struct RecoveryEntry {
  std::filesystem::path file;  // the entry's JSON (it exists only while there is unsaved work)
  EntryLock lock;
  // Deletes the entry's file and its lock file, in that order.
  void remove();
};

std::filesystem::path recovery_folder(const std::filesystem::path& config);       // config/recovery
std::filesystem::path legacy_recovery_file(const std::filesystem::path& config);  // config/recovery.json

// This window's entry, with its lock taken (the folder made if missing). Throws std::runtime_error naming the
// folder when it cannot be made.
RecoveryEntry make_own_entry(const std::filesystem::path& config);

// What a start finds: the unsaved work of one window that is gone, with its entry taken under the lock (kept until
// the work is restored, discarded or left for later), or nothing. Entries that cannot be read are moved aside
// (find_recovery) and `message` says where; lock files left without an entry are deleted. Of several, the legacy
// file comes first, then the folder's entries by name; the others wait for later starts. An entry too big to read
// within `budget` is kept (and said) for a start with a larger one.
struct OrphanedWork {
  std::optional<ui::RecoveryOffer> offer;
  RecoveryEntry entry;
  std::string message;
};
OrphanedWork take_orphaned_work(const std::filesystem::path& config,
                                std::int64_t budget = limits::kDefaultMemoryBudget);

}  // namespace attn::gui
