// The window's questions: unsaved changes before they would be lost, a file changed on disk before Save writes
// over it, another file that exists before Save As replaces it, and unsaved work found at start-up.
#include <utility>

#include <imgui.h>

#include "core/io/hub_cache.h"
#include "core/text_format.h"
#include "ui/logic/document_files.h"
#include "ui/panels/app_window.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

// A modal centred on the window; false while it is not shown.
bool begin_centred_modal(const char* name) {
  if (!ImGui::IsPopupOpen(name)) ImGui::OpenPopup(name);
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, {0.5f, 0.5f});
  return ImGui::BeginPopupModal(name, nullptr, ImGuiWindowFlags_AlwaysAutoResize);
}

}  // namespace

void UnsavedChangesPrompt(AppState& state, AppWindowState& window) {
  PendingActions& pending = state.pending;
  if (!pending.waiting() || state.save_conflict) return;
  // Quitting during a visit to a model's layer: the document open before comes back, to be asked about.
  if (pending.quitting() && state.layer_visit() && !state.document().dirty()) state.end_layer_visit();
  // The model is at stake on quitting, and when the waiting action may replace it (a model file, a lesson page).
  const bool model = state.model_doc.dirty() && pending.puts_model_at_stake();
  const bool document = state.document().dirty();
  if (!document && !model) return pending.go_on();  // nothing to lose
  if (!begin_centred_modal("Unsaved changes")) return;
  std::string what = document ? "\"" + state.scenario().name + "\"" : "";
  if (model) what += (document ? " and the model \"" : "The model \"") + state.model_doc.model().name + "\"";
  ImGui::Text("%s %s changes that are not saved.", what.c_str(), document && model ? "have" : "has");
  ImGui::TextDisabled(pending.quitting() ? "Save them before quitting?" : "Save them before they are replaced?");
  if (ImGui::Button("Save", {120, 0})) {
    // Each file with a name is written; the first without one opens the dialog, and the quit or replacement is
    // dropped, to ask again about what is still unsaved.
    if (document && saves_in_place(state, state.document().path)) save_document(state, state.document().path);
    if (model && saves_in_place(state, state.model_doc.path()) && !state.save_conflict)
      save_model_document(state, state.model_doc.path());
    if (state.save_conflict) {  // a file changed on disk: its question first, then this one again if still wanted
      pending.stay();
      ImGui::CloseCurrentPopup();
      ImGui::EndPopup();
      return;
    }
    const bool ask_document = state.document().dirty() && !saves_in_place(state, state.document().path);
    const bool ask_model = model && state.model_doc.dirty() && !saves_in_place(state, state.model_doc.path());
    if (ask_document || ask_model) {
      if (ask_document) SaveDocument(state, window, true);
      else SaveModel(state, window, true);
      pending.stay();
      ImGui::CloseCurrentPopup();
    } else if (!state.document().dirty() && !(model && state.model_doc.dirty())) {
      pending.go_on();
      ImGui::CloseCurrentPopup();
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Don't save", {120, 0})) {
    pending.go_on();
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel", {120, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) {
    pending.stay();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void RecoveryPrompt(AppState& state) {
  // Not while its Restore waits for the unsaved-changes question (or another question is open).
  if (!state.recovery || state.recovery_answer != RecoveryAnswer::None || state.pending.replacing() ||
      state.save_conflict)
    return;
  if (!begin_centred_modal("Restore unsaved work?")) return;
  const RecoveryOffer& r = *state.recovery;
  ImGui::Text("Attention Lab did not close normally last time (%s).", r.when.c_str());
  const auto named = [](const std::string& name, const std::filesystem::path& file) {
    return "\"" + name + "\"" + (file.empty() ? "" : " (" + shown_path(file) + ")");
  };
  std::string what;
  if (r.scenario) what = named(r.scenario->name, r.original);
  if (r.model) what += (what.empty() ? "the model " : " and the model ") + named(r.model->model.name, r.model_original);
  if (!what.empty()) ImGui::TextUnformatted(("Unsaved changes to " + what + " were kept.").c_str());
  if (r.real_model)
    ImGui::TextUnformatted(("The Real model view's " + model_folder_name(r.real_model->folder) + ", its text and " +
                            plural(std::int64_t(r.real_model->state.ablation.heads.size()), "head") +
                            " knocked out were kept.")
                               .c_str());
  ImGui::TextDisabled("Restored, they open as a document of their own; no file changes until you save.");
  ImGui::TextDisabled("Later (Escape) keeps them for the next start; this window's own work is kept meanwhile.");
  // Enter restores: the answer most wanted, and one a keyboard (or a test's xdotool) can give.
  if (ImGui::Button("Restore them", {160, 0}) || key_pressed(Key::Enter, KeyMods_None, false)) {
    answer_recovery(state, RecoveryAnswer::Restored);
    if (state.recovery_answer == RecoveryAnswer::Restored || state.pending.replacing()) ImGui::CloseCurrentPopup();
  }
  if (!state.recovery_failed.empty()) TextWrappedAtSpaces(state.recovery_failed);
  ImGui::SameLine();
  if (ImGui::Button("Discard them", {160, 0})) {
    answer_recovery(state, RecoveryAnswer::Discarded);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  // Escape gives the answer that loses nothing: neither restored nor deleted.
  if (ImGui::Button("Later", {160, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) {
    answer_recovery(state, RecoveryAnswer::Later);
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

namespace {

// The answer that writes over the file the question is about: the document (or the model) saved there after all.
void WriteOverButton(AppState& state, const SaveConflict& conflict, const char* label) {
  if (!ImGui::Button(label, {160, 0})) return;
  state.close_save_conflict();
  if (conflict.model) save_model_document(state, conflict.path, SaveOver::Overwrite);
  else save_document(state, conflict.path, SaveOver::Overwrite);
  ImGui::CloseCurrentPopup();
}

// Save As onto another file that exists: Replace writes over it, Cancel (Escape) writes nothing.
void ReplaceFilePrompt(AppState& state) {
  if (!begin_centred_modal("Replace file?")) return;
  const SaveConflict conflict = *state.save_conflict;
  TextWrappedAtSpaces(conflict.question);
  ImGui::TextDisabled("Replace writes this document over it; Cancel leaves it as it is.");
  WriteOverButton(state, conflict, "Replace");
  ImGui::SameLine();
  if (ImGui::Button("Cancel", {160, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) {
    state.close_save_conflict();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace

void SaveConflictPrompt(AppState& state, AppWindowState& window) {
  if (!state.save_conflict) return;
  if (state.save_conflict->replace) return ReplaceFilePrompt(state);
  if (!begin_centred_modal("File changed on disk")) return;
  const SaveConflict conflict = *state.save_conflict;
  TextWrappedAtSpaces(conflict.question);
  ImGui::TextDisabled("Overwrite replaces what is on disk; Save as\u2026 keeps it and writes another file.");
  WriteOverButton(state, conflict, "Overwrite");
  ImGui::SameLine();
  if (ImGui::Button("Save as\u2026", {160, 0})) {
    state.close_save_conflict();
    if (conflict.model) SaveModel(state, window, true);
    else SaveDocument(state, window, true);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel", {160, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) {
    state.close_save_conflict();
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attn::ui
