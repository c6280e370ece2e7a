#pragma once
// What the app keeps between runs, in the user's config directory ($XDG_CONFIG_HOME/attention-lab,
// else ~/.config/attention-lab): settings.json (theme, zoom, window size, recent files) and
// recovery.json (the document while it has unsaved changes, so a crash or kill loses nothing).
// Every write is atomic: a temporary file, then a rename.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "ui/logic/app_state.h"

namespace attn::gui {

std::filesystem::path config_dir();

struct Settings {
  std::string theme = "dark";  // dark | light
  float zoom = 1.0f;           // 0.75 .. 3
  int width = 1600, height = 900;
  std::vector<std::string> recent;  // most recent first, at most ui::kMaxRecentFiles (ui::remember_recent)
};

// A missing or unreadable file gives the defaults (settings are a convenience, never an obstacle); a field that
// cannot be used keeps its default (a number out of range is clamped). The first problem of an existing file is
// put into `problem` ("settings.json: width: must be from 640 to 8192 (found 1e+20); 8192 is used").
Settings load_settings(const std::filesystem::path& file, std::string* problem = nullptr);
// Throws std::runtime_error naming the file when it cannot be written.
void save_settings(const Settings& s, const std::filesystem::path& file);

// The recovery file: {"original", "when", "scenario"} for the document's unsaved changes and {"model": {"original",
// "tokens", "model"}} for the model's, either or both.
void write_recovery(const std::filesystem::path& file, const ui::RecoveryOffer& r);
// nullopt when there is no recovery file; a damaged one is ignored (and says so through `problem`).
std::optional<ui::RecoveryOffer> read_recovery(const std::filesystem::path& file, std::string* problem = nullptr);

// Writes `text` to `file` through a temporary file and a rename; throws std::runtime_error naming the file.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace attn::gui
