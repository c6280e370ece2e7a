#pragma once
// The main window: menu bar, the panels laid out for the window's size, keyboard shortcuts, file dialogs,
// prompts and the status line. One call per frame.
#include <imgui.h>

#include <cstdint>

#include "core/matrix.h"
#include "ui/logic/app_state.h"
#include "ui/widgets/file_dialog.h"

namespace attn::ui {

// View > Widget gallery (panel_gallery.cpp): its own examples' data.
struct GalleryState {
  bool open = false;                    // drawn instead of the views
  Matrix large;                         // the texture example, drawn from the seed once
  Matrix editable;                      // the matrix editor's example: a copy of the embeddings
  std::uint64_t editable_revision = 0;  // the document revision it was copied from
};

// What only the window itself keeps between frames.
struct AppWindowState {
  FileDialogState file_dialog;
  bool saving_model = false;  // the save dialog writes the Model view's model, not the document
  bool saving_real = false;   // ... or the Real model view's folder, text and heads knocked out
  GalleryState gallery;
};

void DrawAppWindow(AppState& state, AppWindowState& window, double dt);

// The parts of the window, one file each (menu_bar.cpp, shortcuts.cpp, prompts.cpp); Save is in app_window.cpp.
void MenuBar(AppState& state, AppWindowState& window);
void Shortcuts(AppState& state, AppWindowState& window);
// Before quitting or replacing a document with unsaved changes: save, drop them, or stay.
void UnsavedChangesPrompt(AppState& state, AppWindowState& window);
// At start-up, after a crash or a kill: the unsaved work of a window that is gone. Restore, Discard, or Later
// (Escape: kept for the next start).
void RecoveryPrompt(AppState& state);
// Save found its file changed on disk since it was opened or last saved: Overwrite, Save as..., or Cancel (Escape).
void SaveConflictPrompt(AppState& state, AppWindowState& window);
void GalleryPanel(AppState& state, GalleryState& gallery, AppWindowState& window, ImVec2 pos, ImVec2 size);
// File > Save, and Ctrl+S: to the document's file, or through the dialog when it has none (or `ask`).
void Save(AppState& state, AppWindowState& window, bool ask = false);
void SaveDocument(AppState& state, AppWindowState& window, bool ask = false);   // the document, whatever the view
void SaveModel(AppState& state, AppWindowState& window, bool ask = false);      // the Model view's model
void SaveRealModel(AppState& state, AppWindowState& window, bool ask = false);  // the Real model view

}  // namespace attn::ui
