#include "ui/widgets/file_dialog.h"

#include <algorithm>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "ui/widgets/keys.h"

namespace attn::ui {
namespace {

// The popup's id, whatever its title says.
constexpr const char* kPopup = "###file_dialog";

struct Entry {
  std::string name;
  bool folder;
  bool model = false;  // a folder with a config.json: what Open model folder is looking for
};

std::vector<Entry> list_folder_entries(const std::filesystem::path& folder, std::string& error) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code type_ec;
    if (it->is_directory(type_ec))
      entries.push_back({name, true, std::filesystem::exists(it->path() / "config.json", type_ec)});
    else if (it->path().extension() == ".json") entries.push_back({name, false});
  }
  error = ec ? "Cannot read " + folder.string() + ": " + ec.message() : "";
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.folder != b.folder ? a.folder : a.name < b.name; });
  return entries;
}

}  // namespace

void RequestFileDialog(FileDialogState& s, FileDialogMode mode, const std::filesystem::path& near) {
  s.mode = mode;
  s.open_requested = true;
  s.error.clear();
  std::error_code ec;
  if (!near.empty() && std::filesystem::is_directory(near, ec)) {
    s.folder = near;
    s.file_name.clear();
  } else if (!near.empty()) {
    s.folder = near.has_parent_path() ? near.parent_path() : std::filesystem::current_path(ec);
    s.file_name = near.filename().string();
  } else {
    s.folder = std::filesystem::current_path(ec);
  }
  if (mode == FileDialogMode::Open) s.file_name.clear();
  if (mode == FileDialogMode::Folder) {
    std::filesystem::path f = near.lexically_normal();
    if (!f.empty() && f.filename().empty()) f = f.parent_path();  // "models/gpt2/" is "models/gpt2"
    s.folder = f.has_parent_path() ? f.parent_path() : std::filesystem::current_path(ec);
    s.file_name = f.filename().string();
  }
}

std::optional<std::filesystem::path> FileDialog(FileDialogState& s) {
  if (s.open_requested) {
    ImGui::OpenPopup(kPopup);
    s.open_requested = false;
  }
  std::optional<std::filesystem::path> chosen;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize({std::min(760.0f, display.x * 0.8f), std::min(560.0f, display.y * 0.8f)},
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos({display.x / 2, display.y / 2}, ImGuiCond_Appearing, {0.5f, 0.5f});
  const bool save = s.mode == FileDialogMode::Save, folder = s.mode == FileDialogMode::Folder;
  const std::string title = save ? "Save " + s.saving : folder ? "Open model folder" : "Open scenario";
  if (!ImGui::BeginPopupModal((title + kPopup).c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings)) return chosen;
  ImGui::TextUnformatted(save     ? ("Save the " + s.saving + " as").c_str()
                         : folder ? "Open a model folder (config.json, safetensors weights, tokenizer.json)"
                                  : "Open a scenario");
  ImGui::TextDisabled("%s", s.folder.string().c_str());
  if (ImGui::Button("\u2191 Up") && s.folder.has_parent_path()) {
    s.folder = s.folder.parent_path();
    if (folder) s.file_name.clear();  // a folder's name typed was one in the folder left
  }
  std::string listing_error;
  const std::vector<Entry> entries = list_folder_entries(s.folder, listing_error);
  const float footer = ImGui::GetFrameHeightWithSpacing() * 2.6f;
  ImGui::BeginChild("list", {0, -footer}, true);
  for (const Entry& e : entries) {
    const bool model = folder && e.model;  // picked like a file: a click names it, a double click opens it
    const std::string shown = e.folder && !model ? "\u25B8 " + e.name + "/" : "   " + e.name + (e.folder ? "/" : "");
    const ImGuiSelectableFlags flags =
        ImGuiSelectableFlags_AllowDoubleClick | (folder && !e.folder ? ImGuiSelectableFlags_Disabled : 0);
    if (ImGui::Selectable(shown.c_str(), (!e.folder || model) && e.name == s.file_name, flags)) {
      if (model) {
        s.file_name = e.name;
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) chosen = s.folder / e.name;
      } else if (e.folder) {
        s.folder /= e.name;
        if (folder) s.file_name.clear();
      } else {
        s.file_name = e.name;
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) chosen = s.folder / e.name;
      }
    }
    if (model) {
      ImGui::SameLine();
      ImGui::TextDisabled("a model (config.json)");
    }
  }
  if (entries.empty())
    ImGui::TextDisabled(listing_error.empty() ? (folder ? "No folders here." : "No .json files here.") : "%s",
                        listing_error.c_str());
  ImGui::EndChild();
  ImGui::SetNextItemWidth(-1);
  const bool entered = ImGui::InputTextWithHint(
      "##name", folder ? "a folder in this one or a path (empty: this folder)" : "file name, e.g. my_scenario.json",
      &s.file_name, ImGuiInputTextFlags_EnterReturnsTrue);
  if (!s.error.empty()) ImGui::TextColored({1.0f, 0.45f, 0.4f, 1.0f}, "%s", s.error.c_str());
  ImGui::BeginDisabled(s.file_name.empty() && !folder);
  if (ImGui::Button(save ? "Save" : "Open", {120, 0}) || (entered && (!s.file_name.empty() || folder))) {
    std::filesystem::path p =
        std::filesystem::path(s.file_name).is_absolute() ? std::filesystem::path(s.file_name) : s.folder / s.file_name;
    if (save && p.extension() != ".json") p += ".json";
    chosen = p;
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Cancel", {120, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) ImGui::CloseCurrentPopup();
  if (chosen) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return chosen;
}

}  // namespace attn::ui
