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

namespace attn::gui {

std::filesystem::path config_dir();

struct Settings {
  std::string theme = "dark";  // dark | light
  float zoom = 1.0f;           // 0.75 .. 3
  int width = 1600, height = 900;
  std::vector<std::string> recent;  // most recent first, at most ui::kMaxRecentFiles (ui::remember_recent)
};

// A missing or unreadable file gives the defaults (settings are a convenience, never an obstacle).
Settings load_settings(const std::filesystem::path& file);
// Throws std::runtime_error naming the file when it cannot be written.
void save_settings(const Settings& s, const std::filesystem::path& file);

struct Recovery {
  Scenario scenario;
  std::string original;  // the file the document came from, "" if never saved
  std::string when;      // local time of the last autosave, "2026-11-21 23:40"
};

void write_recovery(const std::filesystem::path& file, const Scenario& s, const std::string& original);
// nullopt when there is no recovery file; a damaged one is ignored (and says so through `problem`).
std::optional<Recovery> read_recovery(const std::filesystem::path& file, std::string* problem = nullptr);

// Writes `text` to `file` through a temporary file and a rename; throws std::runtime_error naming the file.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace attn::gui
