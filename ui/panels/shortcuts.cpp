// Every keyboard shortcut of the main window (F1 lists them: help_overlay.cpp).
#include <imgui.h>

#include "core/edits.h"
#include "ui/logic/lesson_nav.h"
#include "ui/panels/app_window.h"
#include "ui/widgets/keys.h"

namespace attn::ui {
namespace {

void file_and_edit_keys(AppState& state, AppWindowState& window) {
  if (key_pressed(Key::O, KeyMods_Ctrl, false))
    RequestFileDialog(window.file_dialog, FileDialogMode::Open, state.document().path);
  if (key_pressed(Key::S, KeyMods_Ctrl | KeyMods_Shift, false)) Save(state, window, true);
  else if (key_pressed(Key::S, KeyMods_Ctrl, false)) Save(state, window);
  if (key_pressed(Key::Q, KeyMods_Ctrl, false)) state.pending.ask_to_quit();
  // A text field has its own undo: while typing, Ctrl+Z/Y/R belong to it.
  if (ImGui::GetIO().WantTextInput) return;
  if (key_pressed(Key::Z, KeyMods_Ctrl)) state.undo_in_view();
  if (key_pressed(Key::Z, KeyMods_Ctrl | KeyMods_Shift) || key_pressed(Key::Y, KeyMods_Ctrl)) state.redo_in_view();
  if (key_pressed(Key::R, KeyMods_Ctrl, false)) state.reseed_in_view();
}

void display_keys(AppState& state) {
  Display& d = state.display;
  if (key_pressed(Key::Equal, KeyMods_Ctrl) || key_pressed(Key::Equal, KeyMods_Ctrl | KeyMods_Shift))
    d.set_zoom(d.zoom + d.kZoomStep);
  if (key_pressed(Key::Minus, KeyMods_Ctrl)) d.set_zoom(d.zoom - d.kZoomStep);
  if (key_pressed(Key::Zero, KeyMods_Ctrl, false)) d.set_zoom(1.0f);
  if (key_pressed(Key::F5, KeyMods_None, false)) d.presentation = !d.presentation;
  if (key_pressed(Key::F11, KeyMods_None, false)) d.fullscreen = !d.fullscreen;
  if (key_pressed(Key::F1, KeyMods_None, false)) state.set_help_shown(!state.show_help);
  if (key_pressed(Key::Escape, KeyMods_None, false)) state.set_help_shown(false);
}

// A lesson turns pages with PageUp/PageDown, whatever the view.
void lesson_keys(AppState& state) {
  if (!state.lesson.open()) return;
  const int pages = static_cast<int>(state.lesson.current().pages.size());
  if (key_pressed(Key::PageDown, KeyMods_None, false) && state.lesson.page + 1 < pages)
    GoToLessonPage(state, state.lesson.index, state.lesson.page + 1);
  if (key_pressed(Key::PageUp, KeyMods_None, false) && state.lesson.page > 0)
    GoToLessonPage(state, state.lesson.index, state.lesson.page - 1);
}

// The arrows, Home, End and Space walk through the tokens in the decode view, through the steps elsewhere.
void navigation_keys(AppState& state) {
  if (ImGui::GetIO().WantTextInput) return;  // they belong to the field being typed in
  if (state.view == View::Decode) {
    if (key_pressed(Key::Right)) state.decode_by(1);
    if (key_pressed(Key::Left)) state.decode_by(-1);
    if (key_pressed(Key::Home, KeyMods_None, false)) state.set_decode_token(0);
    if (key_pressed(Key::End, KeyMods_None, false)) state.set_decode_token(state.scenario().n_q() - 1);
    if (key_pressed(Key::Space, KeyMods_None, false)) state.toggle_decode_play();
    return;
  }
  if (key_pressed(Key::Right)) state.step_by(1);
  if (key_pressed(Key::Left)) state.step_by(-1);
  if (key_pressed(Key::Home, KeyMods_None, false)) state.set_step(0);
  if (key_pressed(Key::End, KeyMods_None, false)) state.set_step(step_count(state.trace().attention) - 1);
  if (key_pressed(Key::Down)) state.set_head(state.pipeline.head + 1);
  if (key_pressed(Key::Up)) state.set_head(state.pipeline.head - 1);
  if (key_pressed(Key::Space, KeyMods_None, false)) state.toggle_play();
}

}  // namespace

void Shortcuts(AppState& state, AppWindowState& window) {
  file_and_edit_keys(state, window);
  display_keys(state);
  lesson_keys(state);
  navigation_keys(state);
}

}  // namespace attn::ui
