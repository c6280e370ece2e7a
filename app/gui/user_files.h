#pragma once
// What the app keeps between runs, in the user's config directory ($XDG_CONFIG_HOME/attention-lab,
// else ~/.config/attention-lab): settings.json (theme, zoom, window size, recent files) and the recovery entries,
// one per running window (recovery/window-<pid>.json: its unsaved work, so a crash or kill loses nothing;
// recovery_entries.h).
// Every write is atomic: a temporary file of its own, then a rename (core/io/atomic_file.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/memory_budget.h"
#include "core/scenario.h"
#include "ui/logic/app_state.h"

namespace attn::gui {

std::filesystem::path config_dir();

struct Settings {
  std::string theme = "dark";  // dark | light
  float zoom = 1.0f;           // 0.75 .. 3
  int width = 1600, height = 900;
  std::vector<std::string> recent;  // most recent first, at most ui::kMaxRecentFiles (ui::remember_recent)
  // "memory_budget": bytes, or a size as --memory-budget takes it; absent, the machine's default
  std::optional<std::int64_t> memory_budget;
};

// A missing or unreadable file gives the defaults (settings are a convenience, never an obstacle); a field that
// cannot be used keeps its default (a number out of range is clamped). The first problem of an existing file is
// put into `problem` ("settings.json: width: must be from 640 to 8192 (found 1e+20); 8192 is used"). A file that
// cannot be read at all is moved aside (set_aside), so the settings written at quit do not replace it.
Settings load_settings(const std::filesystem::path& file, std::string* problem = nullptr);
// Throws std::runtime_error naming the file when it cannot be written. A recent file whose path is not UTF-8 (or
// has control characters) is left out: JSON cannot hold it.
void save_settings(const Settings& s, const std::filesystem::path& file);

// The recovery file: {"original", "original_stamp", "when", "scenario"} for the document's unsaved changes and
// {"model": {"original", "original_stamp", "tokens", "model"}} for the model's, either or both. "original" is the
// absolute canonical path: a JSON string when its bytes are UTF-8, else a list of its byte values (0-255);
// "original_stamp" is {"size", "modified_ns"} of the original when it was opened or last saved.
void write_recovery(const std::filesystem::path& file, const ui::RecoveryOffer& r);
// nullopt when there is no recovery file or it cannot be read (then `problem` says why, naming the file). Reading it
// is held to `budget` like opening a file (a BudgetError is thrown: the file is fine, the budget too small).
std::optional<ui::RecoveryOffer> read_recovery(const std::filesystem::path& file, std::string* problem = nullptr,
                                               std::int64_t budget = limits::kDefaultMemoryBudget);

// What start-up finds: the offer, or a file that could not be read, moved aside to `file`.unreadable (or
// .unreadable-2, -3, ... when taken; never over another file) and kept. `message` says which and where; `stuck`
// when it could not even be moved (it stays as it is: no window writes an entry but its own).
struct FoundRecovery {
  std::optional<ui::RecoveryOffer> offer;
  std::string message;
  bool stuck = false;
};
// One too big for `budget` is kept as it is (`stuck`), for a start with a larger budget.
FoundRecovery find_recovery(const std::filesystem::path& file, std::int64_t budget = limits::kDefaultMemoryBudget);
// Moves `file` to the first free name of `file`.unreadable, .unreadable-2, ...; returns it. Throws
// std::runtime_error with the reason when it cannot.
std::filesystem::path set_aside(const std::filesystem::path& file);

// The one atomic write (core/io/atomic_file.h), after making the config folder if it is missing. Throws InputError
// (a std::runtime_error) naming the file and the reason.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace attn::gui
