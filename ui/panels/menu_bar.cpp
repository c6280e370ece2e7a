// The menu bar: File, Edit, Step, Lessons, View and Help, the views as tabs, and where the user is.
#include <string>

#include <imgui.h>

#include "core/edits.h"
#include "ui/logic/document_files.h"
#include "ui/logic/glyphs.h"
#include "ui/logic/lesson_nav.h"
#include "ui/panels/app_window.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

void file_menu(AppState& state, AppWindowState& window) {
  if (!ImGui::BeginMenu("File")) return;
  if (ImGui::MenuItem("Open\u2026", "Ctrl+O"))
    RequestFileDialog(window.file_dialog, FileDialogMode::Open, state.document().path);
  if (ImGui::MenuItem("Open model folder\u2026"))
    RequestFileDialog(window.file_dialog, FileDialogMode::Folder, state.real_model.folder());
  if (ImGui::MenuItem("Save", "Ctrl+S")) Save(state, window);
  if (ImGui::BeginMenu("Open recent", !state.recent_files.empty())) {
    for (const std::string& f : state.recent_files)
      if (ImGui::MenuItem(f.c_str())) {
        // A model folder replaces nothing unsaved; a recent file may be a model.
        if (recent_is_folder(f)) open_model_folder(state, f);
        else state.pending.ask_to_replace([&state, f] { open_document(state, f); }, true);
      }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Save as\u2026", "Ctrl+Shift+S")) Save(state, window, true);
  if (ImGui::MenuItem("Reset to file", nullptr, false, state.document().dirty())) state.reset_to_saved();
  if (ImGui::BeginMenu("Export")) {
    if (ImGui::MenuItem("Trace as JSON")) export_document(state, "json");
    if (ImGui::MenuItem("Handout as Markdown", nullptr, false, static_cast<bool>(state.handout)))
      export_document(state, "md");
    if (ImGui::MenuItem("Handout as LaTeX", nullptr, false, static_cast<bool>(state.handout)))
      export_document(state, "tex");
    ImGui::EndMenu();
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.pending.ask_to_quit();
  ImGui::EndMenu();
}

void edit_menu(AppState& state) {
  if (!ImGui::BeginMenu("Edit")) return;
  if (ImGui::MenuItem("Undo", "Ctrl+Z", false, state.can_undo_in_view())) state.undo_in_view();
  if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, state.can_redo_in_view())) state.redo_in_view();
  if (ImGui::MenuItem("Re-seed weights", "Ctrl+R")) state.reseed_in_view();
  ImGui::EndMenu();
}

void step_menu(AppState& state) {
  if (!ImGui::BeginMenu("Step")) return;
  const AttentionConfig& a = state.trace().attention;
  for (const Step s : pipeline_steps(a)) {
    const int index = step_index(s, a);
    if (ImGui::MenuItem(std::string(step_info(s).title).c_str(), std::to_string(index).c_str(),
                        s == state.pipeline.step))
      state.set_step(index);
  }
  ImGui::Separator();
  if (ImGui::MenuItem(state.pipeline.playing ? "Pause" : "Play", "Space")) state.toggle_play();
  ImGui::EndMenu();
}

void lessons_menu(AppState& state) {
  if (!ImGui::BeginMenu("Lessons", !state.lesson.lessons.empty())) return;
  for (std::size_t i = 0; i < state.lesson.lessons.size(); ++i) {
    const std::string item = std::to_string(i + 1) + "  " + state.lesson.lessons[i].title;
    if (ImGui::MenuItem(item.c_str(), nullptr, state.lesson.index == static_cast<int>(i)))
      GoToLessonPage(state, static_cast<int>(i), 0);
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Close lesson", nullptr, false, state.lesson.open())) CloseLesson(state);
  ImGui::EndMenu();
}

void view_menu(AppState& state, AppWindowState& window) {
  if (!ImGui::BeginMenu("View")) return;
  Display& d = state.display;
  if (ImGui::MenuItem("Presentation mode", "F5", d.presentation)) d.presentation = !d.presentation;
  if (ImGui::MenuItem("Full screen", "F11", d.fullscreen)) d.fullscreen = !d.fullscreen;
  ImGui::Separator();
  if (ImGui::MenuItem("Zoom in", "Ctrl++", false, d.zoom < d.kMaxZoom)) d.set_zoom(d.zoom + d.kZoomStep);
  if (ImGui::MenuItem("Zoom out", "Ctrl+-", false, d.zoom > d.kMinZoom)) d.set_zoom(d.zoom - d.kZoomStep);
  if (ImGui::MenuItem("Actual size", "Ctrl+0")) d.set_zoom(1.0f);
  ImGui::Separator();
  if (ImGui::MenuItem("Dark theme", nullptr, d.theme == Theme::Dark)) d.theme = Theme::Dark;
  if (ImGui::MenuItem("Light theme", nullptr, d.theme == Theme::Light)) d.theme = Theme::Light;
  ImGui::Separator();
  if (ImGui::MenuItem("Widget gallery", nullptr, window.gallery.open)) window.gallery.open = !window.gallery.open;
  ImGui::EndMenu();
}

void help_menu(AppState& state) {
  if (!ImGui::BeginMenu("Help")) return;
  if (ImGui::MenuItem("Keyboard shortcuts", "F1")) state.set_help_shown(true);
  ImGui::EndMenu();
}

// A view's tab or menu item, the current one in the accent colour.
void view_item(AppState& state, View v) {
  const bool current = state.view == v;
  if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(accent_colour()));
  if (ImGui::MenuItem(std::string(view_title(v)).c_str(), nullptr, current)) state.show_view(v);
  if (current) ImGui::PopStyleColor();
}

float tab_width(View v, float pad) { return ImGui::CalcTextSize(std::string(view_title(v)).c_str()).x + pad; }

// The views as tabs in the menu bar: always one click away, the current one marked. At a large zoom those past the
// window's edge are listed under "»" instead of running off it.
void view_tabs(AppState& state) {
  ImGui::SameLine(0, 30);
  const float pad = 2 * ImGui::GetStyle().ItemSpacing.x, more_w = ImGui::CalcTextSize("\u00BB").x + 2 * pad;
  for (int i = 0; i < kViewCount; ++i) {
    float rest = 0;  // the tabs from this one on
    for (int k = i; k < kViewCount; ++k) rest += tab_width(static_cast<View>(k), pad);
    const float room = ImGui::GetWindowWidth() - ImGui::GetCursorPosX();
    if (rest > room && tab_width(static_cast<View>(i), pad) + more_w > room) {
      if (ImGui::BeginMenu("\u00BB")) {
        for (int k = i; k < kViewCount; ++k) view_item(state, static_cast<View>(k));
        ImGui::EndMenu();
      }
      return;
    }
    view_item(state, static_cast<View>(i));
  }
}

// Where we are, always visible: the step or token and the play state.
std::string where(const AppState& state) {
  const std::string help = "   F1 help";
  const std::string playing = "  \u25B6 playing";
  if (state.view == View::Pipeline)
    return "step " + std::to_string(step_index(state.pipeline.step, state.trace().attention)) + " (of 0\u2013" +
           std::to_string(step_count(state.trace().attention) - 1) + ")" + (state.pipeline.playing ? playing : "") +
           help;
  if (state.view == View::Decode)
    return "token " + std::to_string(state.decode.token + 1) + " of " + std::to_string(state.scenario().n_q()) +
           (state.decode.playing ? playing : "") + help;
  return "F1 help";
}

// At the right end: the place, after "computing..." while a big document is recomputed on the worker (until
// it is done every view shows the previous revision).
void place_and_progress(const AppState& state) {
  const std::string place = where(state);
  const std::string busy = state.computing() ? "computing" + glyph::kEllipsis + "   " : "";
  const float x = ImGui::GetWindowWidth() - ImGui::CalcTextSize((busy + place).c_str()).x - 16;
  ImGui::SameLine();
  if (ImGui::GetCursorPosX() > x) return;  // no room beside the menus and tabs (a large zoom): never drawn over them
  ImGui::SameLine(x);
  if (!busy.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, accent_colour());
    ImGui::TextUnformatted(busy.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine(0, 0);
  }
  ImGui::TextDisabled("%s", place.c_str());
}

}  // namespace

void MenuBar(AppState& state, AppWindowState& window) {
  if (!ImGui::BeginMainMenuBar()) return;
  file_menu(state, window);
  edit_menu(state);
  step_menu(state);
  lessons_menu(state);
  view_menu(state, window);
  help_menu(state);
  view_tabs(state);
  place_and_progress(state);
  ImGui::EndMainMenuBar();
}

}  // namespace attn::ui
