#pragma once
// ui::FileDialog: a modal to pick a scenario file to open, a path to save to or a model folder to open, browsing
// folders with std::filesystem (Dear ImGui has no native dialog, and the app must run offline with no extra packages).
#include <filesystem>
#include <optional>
#include <string>

namespace attn::ui {

// Folder: a Hugging Face model folder (the folder listed, or one typed); its .json files show but are not picked.
enum class FileDialogMode { Open, Save, Folder };

struct FileDialogState {
  bool open_requested = false;  // set to show the dialog on the next frame
  FileDialogMode mode = FileDialogMode::Open;
  std::filesystem::path folder;     // what is listed
  std::string file_name;            // the name typed or picked
  std::string error;                // the folder could not be read, ...
  std::string saving = "scenario";  // what a Save dialog writes: "scenario", "model", "Real model view"
};

// Call every frame. Returns the chosen path in the frame the user confirms.
std::optional<std::filesystem::path> FileDialog(FileDialogState& s);

// Starts the dialog in `near`'s folder (or the current directory) with its name pre-filled; a folder to open
// starts beside `near` (the model folder open now), its name typed.
void RequestFileDialog(FileDialogState& s, FileDialogMode mode, const std::filesystem::path& near);

}  // namespace attn::ui
