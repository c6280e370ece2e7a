#include "ui/panels/app_window.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <imgui.h>
#include <imgui_internal.h>  // GetActiveID: the widget an edit comes from

#include "core/io/hub_cache.h"
#include "core/text_format.h"
#include "ui/logic/document_files.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/lesson_nav.h"
#include "ui/panels/panels.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

// With the layout check on: every cell the lesson page talks about is outlined on screen (the pipeline view
// shows them; the gallery, drawn instead of the views, has outlines of its own).
void check_lesson_outlines(const AppState& state, const AppWindowState& window) {
  if (!LayoutCheckOn()) return;
  const std::vector<std::pair<int, int>> drawn = TakeOutlinedCells();
  if (!state.lesson.open() || state.view != View::Pipeline || window.gallery.open) return;
  const LessonPage& p = state.lesson.current_page();
  for (const auto& cell : p.highlight)
    if (std::find(drawn.begin(), drawn.end(), cell) == drawn.end())
      ReportLayoutProblem("Lesson", "page " + std::to_string(state.lesson.page + 1) + " highlights cell (" +
                                        std::to_string(cell.first) + ", " + std::to_string(cell.second) +
                                        "), which no matrix on screen outlines");
}

void status_line(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("##status", pos, size, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
  if (state.message.empty() && state.view == View::Train) {
    ImGui::TextDisabled("%s", "The run is not saved: Open in Model view, then File > Save, keeps a snapshot's model.");
  } else if (state.message.empty() && state.view == View::Real) {
    const std::filesystem::path& folder = state.real_model.folder();
    ImGui::TextDisabled("%s", folder.empty() ? "no model folder open" : shown_path(folder).c_str());
  } else if (state.message.empty()) {
    const std::filesystem::path& path = state.model_in_view() ? state.model_doc.path() : state.document().path;
    ImGui::TextDisabled("%s", path.empty() ? "not saved yet" : shown_path(path).c_str());
  } else {
    if (ImGui::SmallButton("\u00D7")) state.say("");
    ImGui::SameLine();
    if (!state.more_messages.empty()) {  // dismissing this one shows the next
      ImGui::TextDisabled("(%zu more)", state.more_messages.size());
      ImGui::SameLine();
    }
    // A long message wraps at spaces (status_height gives it the lines) rather than being cut at the edge.
    ImGui::BeginGroup();
    TextWrappedAtSpaces(state.message, accent_colour());  // amber on dark, a deeper orange that reads on light
    ImGui::EndGroup();
  }
  ImGui::End();
}

// The status line's height: a message wraps onto up to four lines beside its dismiss button and count.
float status_height(const AppState& state, float width) {
  const float one_line = ImGui::GetFrameHeight() + 8;
  if (state.message.empty()) return one_line;
  const float text_w = width - 2 * ImGui::GetStyle().WindowPadding.x - 6 * ImGui::GetFontSize();
  const auto lines = static_cast<float>(std::clamp<std::size_t>(WrapAtSpaces(state.message, text_w).size(), 1, 4));
  return one_line + (lines - 1) * ImGui::GetTextLineHeightWithSpacing();
}

// Where each panel goes: the inputs on the left (not in presentation mode), the heads on the right, and
// a lesson page under the pipeline or in a column beside the other views.
struct Layout {
  float top, h, status_h;
  float left_w, right_w, center_w, explain_h, lesson_w;
};

Layout layout_for(const AppState& state, ImVec2 display) {
  const WindowLayout& w = GetStyle().layout;
  Layout l;
  l.top = ImGui::GetFrameHeight();
  // Presenting, the file's path is no news to the class: the line is there only for a message (an error).
  l.status_h = state.display.presentation && state.message.empty() ? 0.0f : status_height(state, display.x);
  l.h = display.y - l.top - l.status_h;
  const float side_zoom = std::min(state.display.effective_zoom(), w.side_zoom_cap);
  // A lesson on the Train view drives the run itself: its settings panel gives the room to the charts and heads. On
  // the Real model view the page sets the text and the heads knocked out: once a model is open, the folder field
  // gives its room to the view too, as the scenario's inputs do to a page measuring that model.
  const bool lesson_drives =
      state.lesson.open() && (state.view == View::Train || (state.view == View::Real && state.real_model.loaded()) ||
                              state.lesson.current_page().real_measure_sonnets.has_value());
  const bool no_inputs = state.display.presentation || lesson_drives;
  l.left_w = no_inputs ? 0.0f : std::clamp(display.x * w.inputs_share, w.inputs_min, w.inputs_max) * side_zoom;
  // A lesson page that does not point at the Heads panel gives its room to the step it explains.
  const bool heads = !state.lesson.open() || state.view != View::Pipeline || state.lesson.current_page().heads_panel;
  l.right_w = heads ? std::clamp(display.x * w.heads_share, w.heads_min, w.heads_max) *
                          std::min(state.display.zoom, w.side_zoom_cap)
                    : 0.0f;
  l.center_w = display.x - l.left_w - l.right_w;
  // A lesson page gets the height its text needs, so it is read whole without scrolling.
  l.explain_h = state.lesson.open() ? std::clamp(LessonPanelHeight(state, l.center_w), l.h * w.lesson_min_share,
                                                 l.h * w.lesson_max_share)
                                    : std::clamp(l.h * w.explain_share, w.explain_min, w.explain_max);
  const float column_share = state.display.presentation ? w.lesson_column_share_presenting : w.lesson_column_share;
  l.lesson_w = state.lesson.open() && state.view != View::Pipeline
                   ? std::clamp(display.x * column_share, w.lesson_column_min, w.lesson_column_max)
                   : 0.0f;
  return l;
}

// Everything the pipeline, heads and decode views draw comes from the shown (immutable) computation.
// Some drawn matrices are built each frame from the trace and the head, projection or decode token shown
// (kᵀ, a head's W_Q columns): the version covers those too.
std::uint64_t heatmap_version(const AppState& state) {
  std::uint64_t version = state.shown_ticket();
  for (const std::uint64_t part :
       {std::uint64_t(state.pipeline.head), std::uint64_t(state.pipeline.projection), std::uint64_t(state.decode.token),
        std::uint64_t(state.pipeline.show_absorbed), std::uint64_t(state.pipeline.step)})
    version = (version ^ part) * 0x100000001b3ull + 1;  // never 0 ("unknown")
  return version;
}

// The pipeline view: the step above its explanation (or the lesson page), the heads beside. A page with an
// experiment takes the centre.
void pipeline_view(AppState& state, const Layout& l) {
  const bool experiment = state.lesson.open() && state.lesson.current_page().experiment;
  if (experiment) {
    PushHeatmapVersion(0);  // the experiment computes its own matrices from its slider
    LessonPanel(state, {l.left_w, l.top}, {l.center_w, l.h});
    PopHeatmapVersion();
  } else {
    PipelinePanel(state, {l.left_w, l.top}, {l.center_w, l.h - l.explain_h});
    const ImVec2 below{l.left_w, l.top + l.h - l.explain_h}, size{l.center_w, l.explain_h};
    if (state.lesson.open()) LessonPanel(state, below, size);
    else ExplainPanel(state, below, size);
  }
  if (l.right_w > 0) HeadsPanel(state, {l.left_w + l.center_w, l.top}, {l.right_w, l.h});
}

void views(AppState& state, const Layout& l, ImVec2 display) {
  if (l.left_w > 0) {
    if (state.view == View::Model) ModelInputsPanel(state, {0, l.top}, {l.left_w, l.h});
    else if (state.view == View::Train) TrainInputsPanel(state, {0, l.top}, {l.left_w, l.h});
    else if (state.view == View::Real) RealModelInputsPanel(state, {0, l.top}, {l.left_w, l.h});
    else InputsPanel(state, {0, l.top}, {l.left_w, l.h});
  }
  if (l.lesson_w > 0) LessonPanel(state, {display.x - l.lesson_w, l.top}, {l.lesson_w, l.h});
  const ImVec2 view_pos{l.left_w, l.top}, view_size{display.x - l.left_w - l.lesson_w, l.h};
  PushHeatmapVersion(heatmap_version(state));
  PushHeatmapRanges(state.known_ranges());
  switch (state.view) {
    case View::Pipeline: pipeline_view(state, l); break;
    case View::Decode: DecodePanel(state, view_pos, view_size); break;
    case View::Compare: ComparePanel(state, view_pos, view_size); break;
    case View::Memory: MemoryPanel(state, view_pos, view_size); break;
    case View::Cost: CostPanel(state, view_pos, view_size); break;
    case View::Model:  // its matrices change with the shown forward pass, not the document
      PushHeatmapVersion(state.model_doc.shown().ticket * 2 + 1);
      ModelPanel(state, view_pos, view_size);
      PopHeatmapVersion();
      break;
    case View::Train: TrainPanel(state, view_pos, view_size); break;
    case View::Real:
      PushHeatmapVersion(state.real_model.shown().ticket * 2 + 1);
      RealModelPanel(state, view_pos, view_size);
      PopHeatmapVersion();
      break;
  }
  PopHeatmapRanges();
  PopHeatmapVersion();
}

void file_dialog(AppState& state, AppWindowState& window) {
  const auto chosen = FileDialog(window.file_dialog);
  if (!chosen) return;
  if (window.file_dialog.mode == FileDialogMode::Folder) {
    open_model_folder(state, *chosen);
  } else if (window.file_dialog.mode == FileDialogMode::Open) {
    state.pending.ask_to_replace([&state, p = *chosen] { open_document(state, p); }, true);  // it may be a model
  } else if (window.saving_real) {
    save_real_model(state, *chosen);
  } else if (window.saving_model) save_model_document(state, *chosen);
  else save_document(state, *chosen);
}

}  // namespace

void Save(AppState& state, AppWindowState& window, bool ask) {
  if (state.view == View::Real && state.real_model.loaded()) SaveRealModel(state, window, ask);
  else if (state.model_in_view()) SaveModel(state, window, ask);
  else SaveDocument(state, window, ask);
}

void SaveRealModel(AppState& state, AppWindowState& window, bool ask) {
  window.saving_model = false;
  window.saving_real = true;
  const std::filesystem::path& path = state.real_view.file;
  if (ask || path.empty()) {
    window.file_dialog.saving = "Real model view";
    RequestFileDialog(
        window.file_dialog, FileDialogMode::Save,
        path.empty() ? std::filesystem::path(model_folder_name(state.real_model.folder()) + ".json").filename() : path);
  } else {
    save_real_model(state, path);
  }
}

void SaveModel(AppState& state, AppWindowState& window, bool ask) {
  window.saving_real = false;
  window.file_dialog.saving = "model";
  window.saving_model = true;
  const std::filesystem::path& path = state.model_doc.path();
  if (ask || !saves_in_place(state, path))
    RequestFileDialog(window.file_dialog, FileDialogMode::Save, save_as_start(state, path));
  else save_model_document(state, path);
}

void SaveDocument(AppState& state, AppWindowState& window, bool ask) {
  window.saving_real = false;
  window.file_dialog.saving = "scenario";
  window.saving_model = false;
  const std::filesystem::path& path = state.document().path;
  if (ask || !saves_in_place(state, path))
    RequestFileDialog(window.file_dialog, FileDialogMode::Save, save_as_start(state, path));
  else save_document(state, path);
}

void BeginPanel(const char* name, ImVec2 pos, ImVec2 size, ImGuiWindowFlags extra) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  // No background: the panels tile the window, whose frame is cleared to the window background colour (the app's
  // render_frame: one full clear, cheap under software GL). Square corners, as tiles meet.
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::Begin(name, nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoBackground | extra);
  ImGui::PopStyleVar();
}

void DrawAppWindow(AppState& state, AppWindowState& window, double dt) {
  if (!state.active_widget) state.active_widget = [] { return static_cast<unsigned>(ImGui::GetActiveID()); };
  if (ImGui::GetActiveID() == 0) {
    state.end_gesture();
    state.model_doc.end_gesture();
  }
  state.pipeline.last_hover = std::exchange(state.pipeline.hover, {});
  Shortcuts(state, window);
  state.advance_play(dt);
  MenuBar(state, window);

  const ImVec2 display = ImGui::GetIO().DisplaySize;
  state.next_message();  // one dismissed or cleared: the next waiting one
  const Layout l = layout_for(state, display);
  if (window.gallery.open) GalleryPanel(state, window.gallery, window, {0, l.top}, {display.x, l.h});
  else views(state, l, display);
  if (l.status_h > 0) status_line(state, {0, l.top + l.h}, {display.x, l.status_h});
  HelpOverlay(state);
  file_dialog(state, window);
  UnsavedChangesPrompt(state, window);
  SaveConflictPrompt(state, window);
  RecoveryPrompt(state);
  check_lesson_outlines(state, window);
}

}  // namespace attn::ui
