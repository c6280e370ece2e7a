#include "ui/panels/app_window.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include <imgui.h>
#include <imgui_internal.h>

#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/io/trace_json.h"
#include "ui/widgets/clear_fill.h"
#include "ui/logic/matrix_export.h"
#include "core/edits.h"
#include "ui/logic/glyphs.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/keys.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/lesson_nav.h"
#include "ui/panels/panels.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

void set_zoom(AppState& state, float zoom) { state.zoom = std::clamp(zoom, kMinZoom, kMaxZoom); }

void shortcuts(AppState& state) {
  if (key_pressed(Key::O, KeyMods_Ctrl, false)) RequestFileDialog(state.file_dialog, FileDialogMode::Open, state.document().path);
  if (key_pressed(Key::S, KeyMods_Ctrl | KeyMods_Shift, false) ||
      (key_pressed(Key::S, KeyMods_Ctrl, false) && state.document().path.empty()))
    RequestFileDialog(state.file_dialog, FileDialogMode::Save, state.document().path);
  else if (key_pressed(Key::S, KeyMods_Ctrl, false))
    SaveScenario(state, state.document().path);
  if (key_pressed(Key::Q, KeyMods_Ctrl, false)) state.quit_requested = true;
  // A text field has its own undo: while typing, Ctrl+Z/Y/R belong to it.
  const bool typing = ImGui::GetIO().WantTextInput;
  if (!typing && key_pressed(Key::Z, KeyMods_Ctrl)) state.undo();
  if (!typing && (key_pressed(Key::Z, KeyMods_Ctrl | KeyMods_Shift) || key_pressed(Key::Y, KeyMods_Ctrl))) state.redo();
  if (!typing && key_pressed(Key::R, KeyMods_Ctrl, false)) state.edit(reseed_weights);
  if (key_pressed(Key::Equal, KeyMods_Ctrl) || key_pressed(Key::Equal, KeyMods_Ctrl | KeyMods_Shift)) set_zoom(state, state.zoom + 0.25f);
  if (key_pressed(Key::Minus, KeyMods_Ctrl)) set_zoom(state, state.zoom - 0.25f);
  if (key_pressed(Key::Zero, KeyMods_Ctrl, false)) set_zoom(state, 1.0f);
  if (key_pressed(Key::F5, KeyMods_None, false)) state.presentation = !state.presentation;
  if (key_pressed(Key::F11, KeyMods_None, false)) state.fullscreen = !state.fullscreen;
  if (key_pressed(Key::F1, KeyMods_None, false)) state.show_help = !state.show_help;
  if (state.lesson >= 0) {  // a lesson turns pages with PageUp/PageDown, whatever the view
    const int pages = static_cast<int>(state.lessons[static_cast<std::size_t>(state.lesson)].pages.size());
    if (key_pressed(Key::PageDown, KeyMods_None, false) && state.lesson_page + 1 < pages)
      GoToLessonPage(state, state.lesson, state.lesson_page + 1);
    if (key_pressed(Key::PageUp, KeyMods_None, false) && state.lesson_page > 0)
      GoToLessonPage(state, state.lesson, state.lesson_page - 1);
  }
  if (key_pressed(Key::Escape, KeyMods_None, false)) state.show_help = false;
  if (ImGui::GetIO().WantTextInput) return;  // arrows and space belong to the field being typed in
  if (state.view == View::Decode) {  // the arrows walk through the tokens instead of the steps
    if (key_pressed(Key::Right)) state.set_decode_step(state.decode_step + 1);
    if (key_pressed(Key::Left)) state.set_decode_step(state.decode_step - 1);
    if (key_pressed(Key::Home, KeyMods_None, false)) state.set_decode_step(0);
    if (key_pressed(Key::End, KeyMods_None, false)) state.set_decode_step(state.scenario().n_q() - 1);
    if (key_pressed(Key::Space, KeyMods_None, false)) state.toggle_decode_play();
    return;
  }
  if (key_pressed(Key::Right)) state.set_step(step_index(state.step) + 1);
  if (key_pressed(Key::Left)) state.set_step(step_index(state.step) - 1);
  if (key_pressed(Key::Home, KeyMods_None, false)) state.set_step(0);
  if (key_pressed(Key::End, KeyMods_None, false)) state.set_step(kStepCount - 1);
  if (key_pressed(Key::Down)) state.set_head(state.head + 1);
  if (key_pressed(Key::Up)) state.set_head(state.head - 1);
  if (key_pressed(Key::Space, KeyMods_None, false)) state.toggle_play();
}

void play(AppState& state, double dt) {
  const bool decoding = state.view == View::Decode;
  if (!(decoding ? state.decode_playing : state.playing)) return;
  state.play_clock += dt;
  if (state.play_clock < kPlaySeconds) return;
  state.play_clock = 0;
  if (decoding) {
    if (state.decode_step + 1 >= state.scenario().n_q()) state.decode_playing = false;
    else state.set_decode_step(state.decode_step + 1);
  } else if (step_index(state.step) + 1 >= kStepCount) {
    state.playing = false;
  } else {
    state.set_step(step_index(state.step) + 1);
  }
}

// The views as tabs in the menu bar: always one click away, the current one marked.
void view_tabs(AppState& state) {
  ImGui::SameLine(0, 30);
  for (int i = 0; i < kViewCount; ++i) {
    const View v = static_cast<View>(i);
    const bool current = state.view == v;
    if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(accent_colour()));
    if (ImGui::MenuItem(std::string(view_title(v)).c_str(), nullptr, current)) state.view = v;
    if (current) ImGui::PopStyleColor();
  }
}

void menu_bar(AppState& state) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open\u2026", "Ctrl+O")) RequestFileDialog(state.file_dialog, FileDialogMode::Open, state.document().path);
    if (ImGui::MenuItem("Save", "Ctrl+S")) {
      if (state.document().path.empty()) RequestFileDialog(state.file_dialog, FileDialogMode::Save, {});
      else SaveScenario(state, state.document().path);
    }
    if (ImGui::BeginMenu("Open recent", !state.recent_files.empty())) {
      for (const std::string& f : state.recent_files)
        if (ImGui::MenuItem(f.c_str())) state.pending_replace = [&state, f] { OpenScenario(state, f); };
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Save as\u2026", "Ctrl+Shift+S"))
      RequestFileDialog(state.file_dialog, FileDialogMode::Save, state.document().path);
    if (ImGui::MenuItem("Reset to file", nullptr, false, state.document().dirty())) state.reset_to_saved();
    if (ImGui::BeginMenu("Export")) {
      if (ImGui::MenuItem("Trace as JSON")) ExportText(state, "json");
      if (ImGui::MenuItem("Handout as Markdown", nullptr, false, static_cast<bool>(state.handout))) ExportText(state, "md");
      if (ImGui::MenuItem("Handout as LaTeX", nullptr, false, static_cast<bool>(state.handout))) ExportText(state, "tex");
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.quit_requested = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, state.can_undo())) state.undo();
    if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, state.can_redo())) state.redo();
    if (ImGui::MenuItem("Re-seed weights", "Ctrl+R")) state.edit(reseed_weights);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Step")) {
    for (const StepInfo& s : all_steps())
      if (ImGui::MenuItem(std::string(s.title).c_str(), std::to_string(step_index(s.step)).c_str(), s.step == state.step))
        state.step = s.step;
    ImGui::Separator();
    if (ImGui::MenuItem(state.playing ? "Pause" : "Play", "Space")) state.toggle_play();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons", !state.lessons.empty())) {
    for (std::size_t i = 0; i < state.lessons.size(); ++i)
      if (ImGui::MenuItem((std::to_string(i + 1) + "  " + state.lessons[i].title).c_str(), nullptr, state.lesson == static_cast<int>(i)))
        GoToLessonPage(state, static_cast<int>(i), 0);
    ImGui::Separator();
    if (ImGui::MenuItem("Close lesson", nullptr, false, state.lesson >= 0)) CloseLesson(state);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Presentation mode", "F5", state.presentation)) state.presentation = !state.presentation;
    if (ImGui::MenuItem("Full screen", "F11", state.fullscreen)) state.fullscreen = !state.fullscreen;
    ImGui::Separator();
    if (ImGui::MenuItem("Zoom in", "Ctrl++", false, state.zoom < kMaxZoom)) set_zoom(state, state.zoom + 0.25f);
    if (ImGui::MenuItem("Zoom out", "Ctrl+-", false, state.zoom > kMinZoom)) set_zoom(state, state.zoom - 0.25f);
    if (ImGui::MenuItem("Actual size", "Ctrl+0")) set_zoom(state, 1.0f);
    ImGui::Separator();
    if (ImGui::MenuItem("Dark theme", nullptr, state.theme == Theme::Dark)) state.theme = Theme::Dark;
    if (ImGui::MenuItem("Light theme", nullptr, state.theme == Theme::Light)) state.theme = Theme::Light;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts", "F1")) state.show_help = true;
    ImGui::EndMenu();
  }
  view_tabs(state);
  // Where we are, always visible: the step and the play state.
  const std::string where =
      state.view == View::Pipeline
          ? "step " + std::to_string(step_index(state.step)) + " (of 0\u2013" + std::to_string(kStepCount - 1) + ")" +
                (state.playing ? "  \u25B6 playing" : "") + "   F1 help"
          : state.view == View::Decode ? "token " + std::to_string(state.decode_step + 1) + " of " +
                                             std::to_string(state.scenario().n_q()) +
                                             (state.decode_playing ? "  \u25B6 playing" : "") + "   F1 help"
                                       : std::string("F1 help");
  // A big document is recomputed on the worker; until it is done every view shows the previous revision.
  const std::string busy = state.computing() ? "computing" + glyph::kEllipsis + "   " : "";
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize((busy + where).c_str()).x - 16);
  if (!busy.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, accent_colour());
    ImGui::TextUnformatted(busy.c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine(0, 0);
  }
  ImGui::TextDisabled("%s", where.c_str());
  ImGui::EndMainMenuBar();
}

// Before quitting or opening another file over unsaved changes: save, drop them, or stay.
void unsaved_changes_prompt(AppState& state) {
  const bool wanted = (state.quit_requested && !state.quit_confirmed) || state.pending_replace;
  if (!wanted) return;
  if (!state.document().dirty()) {  // nothing to lose
    if (state.pending_replace) std::exchange(state.pending_replace, nullptr)();
    if (state.quit_requested) state.quit_confirmed = true;
    return;
  }
  constexpr const char* kPopup = "Unsaved changes";
  if (!ImGui::IsPopupOpen(kPopup)) ImGui::OpenPopup(kPopup);
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, {0.5f, 0.5f});
  if (!ImGui::BeginPopupModal(kPopup, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::Text("\"%s\" has changes that are not saved.", state.scenario().name.c_str());
  ImGui::TextDisabled(state.quit_requested ? "Save them before quitting?" : "Save them before the document is replaced?");
  auto go_on = [&] {
    if (state.pending_replace) std::exchange(state.pending_replace, nullptr)();
    if (state.quit_requested) state.quit_confirmed = true;
    ImGui::CloseCurrentPopup();
  };
  if (ImGui::Button("Save", {120, 0})) {
    if (state.document().path.empty()) {
      RequestFileDialog(state.file_dialog, FileDialogMode::Save, {});
      state.quit_requested = false;
      state.pending_replace = nullptr;
      ImGui::CloseCurrentPopup();
    } else {
      SaveScenario(state, state.document().path);
      if (!state.document().dirty()) go_on();
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Don't save", {120, 0})) go_on();
  ImGui::SameLine();
  if (ImGui::Button("Cancel", {120, 0}) || key_pressed(Key::Escape, KeyMods_None, false)) {
    state.quit_requested = false;
    state.pending_replace = nullptr;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

// At start-up, after a crash or a kill: the last unsaved document, offered back once.
void recovery_prompt(AppState& state) {
  if (!state.recovery || state.recovery_answered) return;
  constexpr const char* kPopup = "Restore unsaved work?";
  if (!ImGui::IsPopupOpen(kPopup)) ImGui::OpenPopup(kPopup);
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, {0.5f, 0.5f});
  if (!ImGui::BeginPopupModal(kPopup, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const RecoveryOffer& r = *state.recovery;
  ImGui::Text("Attention Lab did not close normally last time (%s).", r.when.c_str());
  ImGui::Text("Unsaved changes to \"%s\"%s were kept.", r.scenario.name.c_str(),
              r.original.empty() ? "" : (" (" + r.original.filename().string() + ")").c_str());
  if (ImGui::Button("Restore them", {160, 0})) {
    const Scenario restored = r.scenario;
    if (!r.original.empty()) OpenScenario(state, r.original);
    state.edit([&](Scenario& s) { s = restored; });  // unsaved again, and one undo away from the file
    state.message = "Restored the unsaved changes from " + r.when;
    state.recovery_answered = true;
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Discard them", {160, 0})) {
    state.recovery_answered = true;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

// With the layout check on: every cell the lesson page talks about is outlined on screen.
void check_lesson_outlines(const AppState& state) {
  if (!LayoutCheckOn()) return;
  const std::vector<std::pair<int, int>> drawn = TakeOutlinedCells();
  if (state.lesson < 0 || state.view != View::Pipeline) return;
  const LessonPage& p = state.lessons[static_cast<std::size_t>(state.lesson)].pages[static_cast<std::size_t>(state.lesson_page)];
  for (const auto& cell : p.highlight)
    if (std::find(drawn.begin(), drawn.end(), cell) == drawn.end())
      ReportLayoutProblem("Lesson", "page " + std::to_string(state.lesson_page + 1) + " highlights cell (" + std::to_string(cell.first) +
                                        ", " + std::to_string(cell.second) + "), which no matrix on screen outlines");
}

void status_line(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("##status", pos, size, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
  if (state.message.empty()) {
    ImGui::TextDisabled("%s", state.document().path.empty() ? "not saved yet" : state.document().path.string().c_str());
  } else {
    if (ImGui::SmallButton("\u00D7")) state.message.clear();
    ImGui::SameLine();
    ImGui::TextColored({1.0f, 0.72f, 0.35f, 1.0f}, "%s", state.message.c_str());
  }
  ImGui::End();
}

}  // namespace

void BeginPanel(const char* name, ImVec2 pos, ImVec2 size, ImGuiWindowFlags extra) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  // Square corners: the background is a cleared rectangle (see clear_fill.h), which rounded corners would show.
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::Begin(name, nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                  ImGuiWindowFlags_NoBackground | extra);
  ImGui::PopStyleVar();
  const ImVec2 at = ImGui::GetWindowPos(), extent = ImGui::GetWindowSize();
  AddClearRect(ImGui::GetBackgroundDrawList(), at, {at.x + extent.x, at.y + extent.y}, ImGui::GetColorU32(ImGuiCol_WindowBg));
}

namespace {

// The file at the top of File > Open recent.
void remember(AppState& state, const std::filesystem::path& path) {
  const std::string p = std::filesystem::absolute(path).lexically_normal().string();
  auto& r = state.recent_files;
  r.erase(std::remove(r.begin(), r.end(), p), r.end());
  r.insert(r.begin(), p);
  if (r.size() > 8) r.resize(8);
}

}  // namespace

void OpenScenario(AppState& state, const std::filesystem::path& path) {
  try {
    if (state.open(load_scenario_file(path), path)) remember(state, path);
  } catch (const ScenarioError& e) {
    state.message = "Could not open " + path.string() + ": " + e.what() + " (the current scenario is kept)";
  }
}

void ExportText(AppState& state, const std::string& extension) {
  std::string text;
  if (extension == "json") text = trace_to_json(state.trace()).dump(1) + "\n";
  else text = state.handout(state.trace(), extension == "tex");
  // Beside the document when it has a file, else in the current folder; never over an existing file.
  const std::filesystem::path folder =
      state.document().path.empty() ? std::filesystem::current_path() : std::filesystem::absolute(state.document().path).parent_path();
  const std::string file = unique_file_name(folder.string(), state.scenario().name + "_trace", extension);
  std::ofstream out(file, std::ios::binary);
  out << text;
  state.message = out ? "Exported " + file : "Could not write " + file;
}

void SaveScenario(AppState& state, const std::filesystem::path& path) {
  try {
    save_scenario_file(state.scenario(), path);
    state.mark_saved(path);
    remember(state, path);
    state.message = "Saved " + path.string();
  } catch (const ScenarioError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void DrawAppWindow(AppState& state, double dt) {
  if (!state.active_widget) state.active_widget = [] { return static_cast<unsigned>(ImGui::GetActiveID()); };
  if (ImGui::GetActiveID() == 0) state.end_gesture();
  state.last_hover = state.hover;
  state.hover = {};
  shortcuts(state);
  play(state, dt);
  menu_bar(state);

  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float top = ImGui::GetFrameHeight();
  const float status_h = ImGui::GetFrameHeight() + 8;
  const float h = display.y - top - status_h;
  const float left_w = state.presentation ? 0.0f : std::clamp(display.x * 0.21f, 280.0f, 380.0f) * std::min(state.effective_zoom(), 1.3f);
  const float right_w = std::clamp(display.x * 0.2f, 250.0f, 360.0f) * std::min(state.zoom, 1.3f);
  const float center_w = display.x - left_w - right_w;
  // A lesson page gets the height its text needs (up to 55%), so it is read whole without scrolling.
  const float explain_h = state.lesson >= 0 ? std::clamp(LessonPanelHeight(state, center_w), h * 0.25f, h * 0.55f)
                                            : std::clamp(h * 0.34f, 170.0f, 330.0f);
  if (!state.presentation) InputsPanel(state, {0, top}, {left_w, h});
  // A lesson page sits where the explanation was (pipeline) or in a column on the right (other views);
  // a page with an experiment takes the centre.
  const bool lesson = state.lesson >= 0;
  const bool experiment =
      lesson && state.lessons[static_cast<std::size_t>(state.lesson)].pages[static_cast<std::size_t>(state.lesson_page)].experiment;
  // Beside a chart, wider in presentation mode, where the text is larger.
  const float lesson_w =
      lesson && state.view != View::Pipeline ? std::clamp(display.x * (state.presentation ? 0.36f : 0.3f), 320.0f, 640.0f) : 0.0f;
  const ImVec2 view_pos{left_w, top}, view_size{display.x - left_w - lesson_w, h};
  if (lesson_w > 0) LessonPanel(state, {display.x - lesson_w, top}, {lesson_w, h});
  // Everything the pipeline, heads and decode views draw comes from the shown (immutable) computation.
  // Some drawn matrices are built each frame from the trace and the head, projection or decode step shown
  // (kᵀ, a head's W_Q columns): the version covers those too.
  std::uint64_t version = state.shown_ticket();
  for (const std::uint64_t part : {std::uint64_t(state.head), std::uint64_t(state.projection), std::uint64_t(state.decode_step),
                                   std::uint64_t(state.show_absorbed), std::uint64_t(step_index(state.step))})
    version = (version ^ part) * 0x100000001b3ull + 1;  // never 0 ("unknown")
  PushHeatmapVersion(version);
  switch (state.view) {
    case View::Pipeline:
      if (experiment) {
        PushHeatmapVersion(0);  // the experiment computes its own matrices from its slider
        LessonPanel(state, {left_w, top}, {center_w, h});
        PopHeatmapVersion();
      } else {
        PipelinePanel(state, {left_w, top}, {center_w, h - explain_h});
        if (lesson) LessonPanel(state, {left_w, top + h - explain_h}, {center_w, explain_h});
        else ExplainPanel(state, {left_w, top + h - explain_h}, {center_w, explain_h});
      }
      HeadsPanel(state, {left_w + center_w, top}, {right_w, h});
      break;
    case View::Decode: DecodePanel(state, view_pos, view_size); break;
    case View::Compare: ComparePanel(state, view_pos, view_size); break;
    case View::Memory: MemoryPanel(state, view_pos, view_size); break;
    case View::Cost: CostPanel(state, view_pos, view_size); break;
  }
  PopHeatmapVersion();
  status_line(state, {0, top + h}, {display.x, status_h});
  HelpOverlay(state);

  if (const auto chosen = FileDialog(state.file_dialog)) {
    if (state.file_dialog.mode == FileDialogMode::Open) state.pending_replace = [&state, p = *chosen] { OpenScenario(state, p); };
    else SaveScenario(state, *chosen);
  }
  unsaved_changes_prompt(state);
  recovery_prompt(state);
  check_lesson_outlines(state);
}

}  // namespace attn::ui
