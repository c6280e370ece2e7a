// The Train view: a small model learning a task while the class watches. The loss and each head's score over the
// steps, a timeline of snapshots to scrub, every head's attention on a probe sequence at the snapshot shown, and
// in words what the heads have become.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <imgui.h>

#include "core/model_gradient.h"
#include "core/text_format.h"
#include "ui/logic/lessons.h"
#include "ui/logic/train_actions.h"
#include "ui/logic/train_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

std::string head_name(const HeadScores& h) { return std::to_string(h.layer) + "." + std::to_string(h.head); }

// Head i's line in the score chart (heads past the palette's eight repeat its colours; series_style tells them
// apart).
ImU32 head_colour(std::size_t i) { return GetStyle().okabe_ito[i % GetStyle().okabe_ito.size()]; }

void run_controls(AppState& state) {
  Trainer& t = state.trainer;
  const TrainProgress& p = t.progress();
  ImGui::BeginDisabled(t.at_end() && !p.running);
  if (ImGui::Button(p.running ? "\u275A\u275A Pause" : "\u25B6 Train")) t.toggle();
  ImGui::SameLine();
  if (ImGui::Button("Step")) t.step();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Restart")) restart_training(state);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("A new model from the seed, trained from step 0");
  ImGui::SameLine();
  std::string status = "step " + thousands(t.step_count()) + " of " + thousands(t.settings().steps);
  if (!p.losses.empty()) status += "   batch loss " + format_number(p.losses.back(), 3);
  if (p.running) status += "   " + format_number(p.steps_per_second, 0) + " steps/s";
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(status.c_str());
  if (const auto shown = shown_snapshot(state)) {
    SameLineIfFits(TextWidth("Open in Model view") + 2 * ImGui::GetStyle().FramePadding.x,
                   ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::Button("Open in Model view")) open_snapshot_in_model_view(state, *shown);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Pause, and open the model at step %d in the Model view (File > Save keeps it)", shown->step);
  }
  if (!p.stopped.empty()) TextWrappedAtSpaces(p.stopped, IM_COL32(255, 184, 89, 255));
}

// TextWrappedAtSpaces in a scrolling box (the story, the gradient tab): a paragraph the box's bottom edge would cut at
// the top of its scroll starts below the edge instead, so a class never reads a sentence cut through its middle.
// A paragraph the edge would cut keeps the sentences that fit above it, and the rest starts past it.
void TextWholeInBox(std::string_view text, ImU32 colour = 0) {
  const float width = ImGui::GetContentRegionAvail().x, pitch = ImGui::GetTextLineHeightWithSpacing();
  const float gap = ImGui::GetStyle().ItemSpacing.y, box_top = ImGui::GetStyle().WindowPadding.y;
  // Content coordinates: the first screen runs from the top padding to the box's bottom edge (text is drawn down to
  // it, padding or not).
  const float top = ImGui::GetCursorPosY(), edge = ImGui::GetWindowHeight();
  const auto height = [&](std::string_view part) {
    return static_cast<float>(WrapAtSpaces(part, width).size()) * pitch - gap;
  };
  std::size_t split = 0;  // the bytes drawn above the edge
  if (block_top_clear_of_edge(top, height(text), box_top, edge) == top) split = text.size();
  else
    for (const std::size_t end : sentence_ends(text))
      if (end < text.size() && top + height(text.substr(0, end)) <= edge) split = end;
  if (colour) ImGui::PushStyleColor(ImGuiCol_Text, colour);
  for (const std::string& line : WrapAtSpaces(text.substr(0, split), width)) ImGui::TextUnformatted(line.c_str());
  if (split < text.size()) {
    ImGui::SetCursorPosY(std::max(edge, ImGui::GetCursorPosY()));
    for (const std::string& line : WrapAtSpaces(text.substr(split + (split > 0 ? 1 : 0)), width))
      ImGui::TextUnformatted(line.c_str());
  }
  if (colour) ImGui::PopStyleColor();
}

ImU32 disabled_text_colour() { return ImGui::GetColorU32(ImGuiCol_TextDisabled); }

// The loss and the score charts share their y labels' room, and their end labels', so that their plots line up when
// stacked.
float step_charts_label_width() { return TextWidth("0.25"); }
float step_charts_end_label_width() {
  return std::max({TextWidth("evaluation"), TextWidth("training"), TextWidth("all 88 heads")});
}

// What the lesson page on screen is about (its train_chart): that part gets the room. All off a Train page.
TrainChart page_chart(const AppState& state) {
  if (!state.lesson.open()) return TrainChart::All;
  const LessonPage& p = state.lesson.current_page();
  return p.view == View::Train && !p.train_gradient ? p.train_chart : TrainChart::All;
}

// The steps along x: the whole run, or on a page about the chart the steps trained so far, so the curves fill the
// plot and end at its right edge, their names beside them.
Axis step_axis(const AppState& state, bool page_chart) {
  const int last = page_chart ? std::max(state.trainer.step_count(), 25) : std::max(state.trainer.settings().steps, 1);
  // No title: the timeline above counts the steps, and the line it would take is the head labels' room.
  Axis a = nice_axis(0, last, AxisScale::Linear, NumberUnit::Plain, "");
  if (page_chart) a.hi = last;
  return a;
}

// The y range padded by `share` of it each way: a line of zeros on the frame's bottom edge would read as the axis
// (layer 0's induction scores are about 0 the whole run), and a loss near 0 at the end likewise.
Axis padded(Axis a, double share) {
  const double pad = share * (a.hi - a.lo);
  a.lo -= pad;
  a.hi += pad;
  return a;
}

// The height a chart takes beyond its plot: its title, half a line over the plot, the step labels below it, and
// `below` for a control under the chart.
float chart_overhead(float below) {
  const float h = ImGui::GetTextLineHeight();
  return title_font_size() + 6 + 1.5f * h + kChartTickLength + kChartLabelGap + below;
}

void loss_chart(const AppState& state, ImVec2 size, bool page_chart) {
  const TrainProgress& p = state.trainer.progress();
  Series train{"training batch", {}, {}, GetStyle().okabe_ito[1], series_style(0), "training"};
  Series eval{"evaluation", {}, {}, accent_colour(), series_style(1), "evaluation"};
  double hi = 1.0;
  for (std::size_t s = 0; s < p.losses.size(); ++s) {
    train.x.push_back(static_cast<double>(s + 1));
    train.y.push_back(p.losses[s]);
    hi = std::max(hi, p.losses[s]);
  }
  for (const auto& snap : p.snapshots) {
    eval.x.push_back(snap->step);
    eval.y.push_back(snap->eval.loss);
    hi = std::max(hi, snap->eval.loss);
  }
  // The snapshot the heads show, marked where it is not the run's end (there the lines' names stand, and the end
  // needs no mark).
  std::vector<ChartMark> marks;
  if (const auto shown = shown_snapshot(state); shown && state.train.shown_step >= 0 && shown != p.snapshots.back())
    marks.push_back(
        {static_cast<double>(shown->step), shown->eval.loss, "step " + thousands(shown->step), accent_colour()});
  LineChartOptions o;
  o.title = "Loss (cross-entropy)";
  // Each line named at its end, right of every line: names right of the evaluation's end alone sat on the noisy
  // batch curve, which runs past it.
  o.flags = LineChartFlags_NoLegend | (page_chart ? LineChartFlags_PageChart : 0);
  o.x = step_axis(state, page_chart);
  o.y = padded(nice_axis(0, hi, AxisScale::Linear, NumberUnit::Plain, ""), 0.04);
  o.marks = marks;
  o.size = {size.x, size.y - ImGui::GetStyle().ItemSpacing.y};
  o.y_label_width = step_charts_label_width();
  o.end_label_width = step_charts_end_label_width();
  const std::vector<Series> series{train, eval};
  LineChart("loss", series, o);
}

// The heads' scores of the kind the menu picks; a page's `fixed` kind instead, without the menu.
void score_chart(AppState& state, ImVec2 size, bool page_chart, int fixed = -1) {
  const TrainProgress& p = state.trainer.progress();
  if (p.snapshots.empty()) return;
  int& kind = fixed >= 0 ? fixed : state.train.score_kind;
  std::vector<Series> series;
  std::vector<double> last;
  const std::vector<HeadScores>& heads = p.snapshots.front()->eval.heads;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    Series s{"head " + head_name(heads[i]), {}, {}, head_colour(i), series_style(i), ""};
    for (const auto& snap : p.snapshots) {
      s.x.push_back(snap->step);
      s.y.push_back(head_score(snap->eval.heads[i], kind));
    }
    last.push_back(s.y.back());
    series.push_back(std::move(s));
  }
  LineChartOptions o;
  o.title = score_chart_title(kind);
  o.flags = LineChartFlags_NoLegend | (page_chart ? LineChartFlags_PageChart : 0);
  o.x = step_axis(state, page_chart);
  o.y = padded({0, 1, AxisScale::Linear, NumberUnit::Probability, ""}, 0.04);  // scores are mean attention weights
  // The score's combo at the right of the title's line where both fit: the line under the chart goes to the plot.
  const float combo_w = TextWidth("duplicate-token") + ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x;
  ImGui::PushFont(title_font());
  const float title_w = TextWidth(o.title);
  ImGui::PopFont();
  const bool on_title =
      fixed >= 0 || title_w + 2 * ImGui::GetStyle().ItemSpacing.x + LabelledWidth(combo_w, "score") <= size.x;
  if (on_title && fixed < 0) {
    const ImVec2 at = ImGui::GetCursorPos();
    ImGui::SetCursorPosX(at.x + size.x - LabelledWidth(combo_w, "score"));
    ImGui::SetNextItemWidth(combo_w);
    ImGui::Combo("score", &kind, kScoreKinds, IM_ARRAYSIZE(kScoreKinds));
    ImGui::SetCursorPos(at);
  }
  o.size = {size.x, size.y - (on_title ? ImGui::GetStyle().ItemSpacing.y : ImGui::GetFrameHeightWithSpacing())};
  // Heads whose lines end within a label's height of each other share one name (a layer's, or all of them).
  const float plot_h = std::max(o.size.y - chart_overhead(0), 1.0f);
  const std::vector<std::string> names =
      score_end_labels(heads, last, 1.1 * ImGui::GetTextLineHeight() / plot_h * (o.y.hi - o.y.lo));
  for (std::size_t i = 0; i < series.size(); ++i) series[i].end_label = names[i];
  o.y_label_width = step_charts_label_width();
  o.end_label_width = step_charts_end_label_width();
  LineChart("scores", series, o);
  if (on_title) return;
  ImGui::SetNextItemWidth(size.x * 0.5f);
  ImGui::Combo("score", &kind, kScoreKinds, IM_ARRAYSIZE(kScoreKinds));
}

// The snapshots as a slider: the step shown, or the newest while it is at the end.
void timeline(AppState& state) {
  const TrainProgress& p = state.trainer.progress();
  if (p.snapshots.empty()) return;
  const int last = static_cast<int>(p.snapshots.size()) - 1;
  int index = last;
  if (state.train.shown_step >= 0)
    for (int i = 0; i <= last; ++i)
      if (p.snapshots[static_cast<std::size_t>(i)]->step <= state.train.shown_step) index = i;
  const std::string label = "snapshot at step " + thousands(p.snapshots[static_cast<std::size_t>(index)]->step) +
                            (state.train.shown_step < 0 ? " (the newest)" : "");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderInt("##timeline", &index, 0, last, label.c_str()))
    state.train.shown_step = index == last && p.running ? -1 : p.snapshots[static_cast<std::size_t>(index)]->step;
}

// Every head's attention on the probe sequence: a row of heads per layer, each titled in its line's colour and
// named by what it has become.
void head_thumbnails(TrainView& view, const TrainSnapshot& s, float cell);

void train_head_grid(TrainView& view, const TrainSnapshot& s, ImVec2 avail) {
  int most = 1;
  for (const auto& layer : s.probe_attention) most = std::max(most, static_cast<int>(layer.size()));
  const ImVec2 gap = ImGui::GetStyle().ItemSpacing;
  const float rows = static_cast<float>(s.probe_attention.size()), text = 2.0f * ImGui::GetTextLineHeightWithSpacing();
  const float cell = std::clamp(std::min((avail.x - gap.x * static_cast<float>(most)) / static_cast<float>(most),
                                         (avail.y - rows * (text + gap.y)) / rows),
                                40.0f, 220.0f);
  // Many layers or heads need more room than the box at the smallest thumbnail: the grid scrolls in its own box,
  // its scrollbars decided by the sizes alone (one coming and going would resize the thumbnails every other frame).
  const float need_w = static_cast<float>(most) * (cell + gap.x) - gap.x, need_h = rows * (cell + text + gap.y) - gap.y,
              bar = ImGui::GetStyle().ScrollbarSize;
  bool scroll_y = need_h > avail.y + 0.5f;
  const bool scroll_x = need_w + (scroll_y ? bar : 0.0f) > avail.x + 0.5f;
  scroll_y = scroll_y || (scroll_x && need_h + bar > avail.y + 0.5f);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoScrollbar;
  if (scroll_x || scroll_y) flags = ImGuiWindowFlags_None;
  if (scroll_x) flags |= ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_AlwaysHorizontalScrollbar;
  if (scroll_y) flags |= ImGuiWindowFlags_AlwaysVerticalScrollbar;
  ImGui::BeginChild(
      "heads",
      {scroll_x ? avail.x : need_w + (scroll_y ? bar : 0.0f), scroll_y ? avail.y : need_h + (scroll_x ? bar : 0.0f)},
      false, flags);
  head_thumbnails(view, s, cell);
  ImGui::EndChild();
}

// The thumbnails themselves, `cell` pixels a side: each titled in its line's colour and named by its role below.
void head_thumbnails(TrainView& view, const TrainSnapshot& s, float cell) {
  const std::vector<std::string>& vocab = s.model->vocab;
  std::size_t i = 0;
  for (std::size_t l = 0; l < s.probe_attention.size(); ++l)
    for (std::size_t h = 0; h < s.probe_attention[l].size(); ++h, ++i) {
      const HeadScores& score = s.eval.heads[i];
      if (h > 0) ImGui::SameLine();
      ImGui::BeginGroup();
      ImGui::PushID(static_cast<int>(i));
      const std::string title = "head " + head_name(score);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(head_colour(i)), "%s",
                         (TextWidth(title) <= cell ? title : head_name(score)).c_str());
      HeatmapOptions o;
      o.map = ColourMap::Sequential;
      o.range = ValueRange{0, 1};
      // The keys the causal mask hides are plain 0, not hatched: hatching 8 x 496 small cells cost 30 ms of every
      // frame while training (--bench-frames in this view: 35.6 ms of window-thread CPU per frame, 3.8 without).
      o.size = {cell, cell};
      // One texture each, uploaded once per snapshot: 8 x 1,024 rectangles every frame kept llvmpipe busy.
      o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
                HeatmapFlags_Fill | HeatmapFlags_Texture;
      const Matrix& w = s.probe_attention[l][h];
      const HeatmapResult r = Heatmap("w", w, o);
      if (view.layer == static_cast<int>(l) && view.head == static_cast<int>(h))
        ImGui::GetWindowDrawList()->AddRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), accent_colour(), 0.0f, 0,
                                            GetStyle().outline_width);
      if (r.hovered_row >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        view.layer = static_cast<int>(l);
        view.head = static_cast<int>(h);
        view.row = r.hovered_row;
      }
      if (r.hovered_row >= 0)
        ImGui::SetTooltip(
            "head %s at step %d: %s\nscores: previous-token %s, induction %s, duplicate-token %s, "
            "first-token %s\n\"%s\" (position %d) attends to \"%s\" (position %d): %s\nclick: its gradient",
            head_name(score).c_str(), s.step, role_name(head_role(score)).c_str(),
            probability_text(score.previous_token).c_str(), probability_text(score.induction).c_str(),
            probability_text(score.duplicate_token).c_str(), probability_text(score.first_token).c_str(),
            vocab[static_cast<std::size_t>(s.probe[static_cast<std::size_t>(r.hovered_row)])].c_str(), r.hovered_row,
            vocab[static_cast<std::size_t>(s.probe[static_cast<std::size_t>(r.hovered_col)])].c_str(), r.hovered_col,
            probability_text(w(r.hovered_row, r.hovered_col)).c_str());
      const std::string word = role_word(head_role(score));
      const std::string what = TextWidth(word) <= cell ? word : FitText(role_abbreviation(head_role(score)), cell);
      if (head_role(score) == HeadRole::None) ImGui::TextDisabled("%s", what.c_str());
      else ImGui::TextUnformatted(what.c_str());
      ImGui::PopID();
      ImGui::EndGroup();
    }
}

// What happened, in words: the evaluation at the snapshot shown, every head's role where the page folds the heads
// (`roles`), each change of a head's role up to it (the newest first), then what the task asks, off a lesson page
// (a page's own text says it, and a page's story is read whole).
void story(const AppState& state, const TrainSnapshot& shown, bool roles, bool task) {
  const TrainProgress& p = state.trainer.progress();
  TextWholeInBox("Step " + thousands(shown.step) + ": evaluation loss " + format_number(shown.eval.loss, 3) + ", " +
                 format_number(100.0 * shown.eval.accuracy, 1) + "% of its targets right.");
  if (roles) TextWholeInBox(roles_summary(shown.eval.heads));
  std::vector<std::string> events;
  for (std::size_t i = 1; i < p.snapshots.size() && p.snapshots[i]->step <= shown.step; ++i)
    for (const std::string& change : role_changes(p.snapshots[i - 1]->eval.heads, p.snapshots[i]->eval.heads))
      events.push_back("Step " + thousands(p.snapshots[i]->step) + ": " + change);
  for (auto e = events.rbegin(); e != events.rend(); ++e) TextWholeInBox(*e);
  if (!task) return;
  ImGui::Dummy({0, ImGui::GetFontSize()});  // a blank line: every line stays on the story's one grid of lines
  TextWholeInBox(task_story(state.trainer.settings().run.task), disabled_text_colour());
}

// A height for the story's box from `avail`: its top padding and a whole number of its lines (a child's text shows
// down to its bottom edge, padding or not), so the box ends between two lines and a class never reads a sentence cut
// through its middle (the rest scrolls).
float whole_lines_height(float avail) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float pad = st.WindowPadding.y, pitch = ImGui::GetTextLineHeightWithSpacing();
  const float lines = std::floor((avail - pad + st.ItemSpacing.y) / pitch);
  return lines >= 1 ? pad + lines * pitch - st.ItemSpacing.y : avail;
}

// The head and the query the gradient tab shows, chosen in a combo and a slider.
void gradient_choice(TrainView& view, const TrainSnapshot& s) {
  std::vector<std::string> names;
  for (const HeadScores& h : s.eval.heads) names.push_back(head_name(h) + " (" + role_word(head_role(h)) + ")");
  int chosen = 0;
  for (std::size_t k = 0; k < s.eval.heads.size(); ++k)
    if (s.eval.heads[k].layer == view.layer && s.eval.heads[k].head == view.head) chosen = static_cast<int>(k);
  FitLabel("head");
  if (ImGui::BeginCombo("head", names[static_cast<std::size_t>(chosen)].c_str())) {
    for (std::size_t k = 0; k < names.size(); ++k)
      if (ImGui::Selectable(names[k].c_str(), static_cast<int>(k) == chosen)) {
        view.layer = s.eval.heads[k].layer;
        view.head = s.eval.heads[k].head;
      }
    ImGui::EndCombo();
  }
  FitLabel("query position");
  int row = view.row;
  if (ImGui::SliderInt("query position", &row, 1, static_cast<int>(s.probe.size()) - 1)) view.row = row;
}

// One query's row through a head's kernel: its weights p, what the loss sends to them and to the scores.
struct KernelRow {
  Matrix p, dp, ds;                 // (1, keys)
  std::vector<std::string> labels;  // the keys' tokens
  bool softmax = true;
};

// What the row's gradient comes to in numbers, first, where a short window (a lesson page beside the charts) still
// shows it; the row's three heatmaps; what the kernel does with the gradient, in words; then, for softmax, its
// Jacobian. A saturated row (one weight near 1) has a Jacobian near 0 and passes almost nothing on.
void kernel_row(const KernelRow& r, bool page_about_it) {
  const std::string sizes = gradient_sizes_text(r.p.maxCoeff(), r.dp, r.ds);
  TextWholeInBox(r.softmax ? sizes +
                                 " The nearer a row is to one weight of 1, the less of \u2202L/\u2202p reaches "
                                 "the scores: a saturated row passes almost no training signal, which is "
                                 "why scores are divided by \u221Ad_k."
                           : sizes +
                                 " A linear kernel does not saturate: what reaches the scores shrinks only "
                                 "as the row's sum grows.");
  const float w = ImGui::GetContentRegionAvail().x;
  HeatmapOptions o;
  o.col_labels = &r.labels;  // in the tooltip: 32 keys leave no room to write them
  o.size = {w, 0};
  o.flags = HeatmapFlags_NoValues | HeatmapFlags_NoLabels;
  const auto row_map = [&o, page_about_it](const char* id, const Matrix& m, ColourMap map) {
    ImGui::BeginGroup();
    ImGui::TextUnformatted(id);
    o.map = map;
    o.range = map == ColourMap::Sequential ? std::optional<ValueRange>(ValueRange{0, 1}) : std::nullopt;
    Heatmap(id, m, o);
    ImGui::EndGroup();
    // A lesson page about the gradient is about these strips: it has them in sight.
    if (page_about_it)
      NoteInSight(SightKind::Result, id, std::string("the strip ") + id, ImGui::GetItemRectMin(),
                  ImGui::GetItemRectMax());
  };
  row_map("p, the weights", r.p, ColourMap::Sequential);
  row_map("\u2202L/\u2202p, what reaches the weights", r.dp, ColourMap::Diverging);
  row_map("\u2202L/\u2202s, what reaches the scores", r.ds, ColourMap::Diverging);
  TextWholeInBox("Keys 0 to " + std::to_string(r.labels.size() - 1) +
                     " from left to right; point at a cell for its token and value.",
                 disabled_text_colour());
  if (!r.softmax) {
    TextWholeInBox(
        "This layer's kernel is linear: p = s / Z with Z the sum of the visible scores, so training reaches a "
        "visible score through \u2202p_i/\u2202s_j = (\u03B4_ij - p_i) / Z (the next-token loss on this "
        "sequence).",
        disabled_text_colour());
    return;
  }
  TextWholeInBox(
      "Softmax turns the scores s into the weights p; training reaches the scores only through its\u00A0"
      "Jacobian\u00A0J = diag(p) - p p\u1D40: \u2202L/\u2202s = J \u2202L/\u2202p (the next-token loss on "
      "this sequence).",
      disabled_text_colour());
  TextWholeInBox("The Jacobian J, keys by keys");
  o.map = ColourMap::Diverging;
  o.range.reset();
  o.row_labels = &r.labels;
  Heatmap("jacobian", softmax_jacobian(r.p), o);
}

// The gradient tab: one head's kernel during training, on the probe sequence at the snapshot shown (its backward
// pass computed on a worker once per snapshot).
void gradient(TrainView& view, SnapshotGradients& gradients, const std::shared_ptr<const TrainSnapshot>& shown,
              bool page_about_it) {
  const TrainSnapshot& s = *shown;
  const Eigen::Index n = static_cast<Eigen::Index>(s.probe.size());
  if (n < 2 || s.probe_attention.empty()) return;
  view.layer = std::clamp(view.layer, 0, static_cast<int>(s.probe_attention.size()) - 1);
  view.head =
      std::clamp(view.head, 0, static_cast<int>(s.probe_attention[static_cast<std::size_t>(view.layer)].size()) - 1);
  // By default a query inside the repeat, whose next token an induction head can find.
  view.row = std::clamp(view.row < 0 ? s.repeat.second + s.repeat.length - 2 : view.row, 1, static_cast<int>(n) - 1);
  gradient_choice(view, s);
  const std::vector<HeadGradients>* layers = gradients.of(shown);
  if (!layers) {
    ImGui::TextDisabled("Computing the gradient at step %s…", thousands(s.step).c_str());
    return;
  }
  if (layers->empty()) {
    TextWrappedAtSpaces("The gradient at step " + thousands(s.step) + " could not be computed: out of memory.");
    return;
  }
  const auto layer = static_cast<std::size_t>(view.layer), head = static_cast<std::size_t>(view.head);
  const HeadGradients& g = (*layers)[layer];
  const AttentionConfig& a = s.model->layers[layer].attention;
  // The keys the query may see: those up to it, or all of them without a mask.
  const Eigen::Index i = view.row, keys = a.mask == MaskKind::None ? n : i + 1;
  KernelRow r{s.probe_attention[layer][head].row(i).leftCols(keys),
              g.d_weights[head].row(i).leftCols(keys),
              g.d_scores[head].row(i).leftCols(keys),
              {},
              a.kernel == Kernel::Softmax};
  for (Eigen::Index k = 0; k < keys; ++k)
    r.labels.push_back(s.model->vocab[static_cast<std::size_t>(s.probe[static_cast<std::size_t>(k)])]);
  const std::string query = s.model->vocab[static_cast<std::size_t>(s.probe[static_cast<std::size_t>(i)])];
  TextWrappedAtSpaces("The query at position " + std::to_string(i) + " (\"" + query + "\") at step " +
                      thousands(s.step) + ".");
  kernel_row(r, page_about_it);
}

// The story in a box of whole lines, the rest of the height (its scrollbar always there: the story grows as the run
// trains, and a scrollbar appearing would rewrap it). Padded, so a glyph that reaches left of its pen (the hook of a
// J) is not clipped at the line's start.
void story_box(const AppState& state, const TrainSnapshot& shown, bool roles, bool task) {
  ImGui::BeginChild("story", {0, whole_lines_height(ImGui::GetContentRegionAvail().y)}, false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_AlwaysVerticalScrollbar);
  story(state, shown, roles, task);
  ImGui::EndChild();
}

// A page about one chart: it takes the width and most of the height, at least a third of the window each way as the
// layout check asks of a page's chart; the heads fold to a sentence of their roles, the other chart to the story's
// first sentence (the evaluation loss, or the roles), and the story follows in whole lines.
void chart_page(AppState& state, TrainChart about) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float below =
      about == TrainChart::Scores ? ImGui::GetFrameHeightWithSpacing() : ImGui::GetStyle().ItemSpacing.y;
  const float need = ImGui::GetIO().DisplaySize.y / 3 + chart_overhead(below) + 2;
  // The loss page's story is two sentences; the scores page's tells each head's change of role.
  const float chart_h = std::min(avail.y, std::max(avail.y * (about == TrainChart::Loss ? 0.72f : 0.62f), need));
  if (about == TrainChart::Loss) loss_chart(state, {avail.x, chart_h}, true);
  else score_chart(state, {avail.x, chart_h}, true);
  if (const auto shown = shown_snapshot(state)) story_box(state, *shown, true, false);
}

// A page about the loss and the heads changing together: both charts stacked over one step axis, their plots lined up
// and as high as each other (one figure, as the layout check judges it), the evaluation and every head's role in the
// three lines under them (the rest of the story scrolls).
void loss_and_scores_page(AppState& state) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float story_h = st.WindowPadding.y + 3 * ImGui::GetTextLineHeightWithSpacing() - st.ItemSpacing.y;
  const float chart_h = std::floor((avail.y - story_h - st.ItemSpacing.y) / 2);
  loss_chart(state, {avail.x, chart_h}, true);
  score_chart(state, {avail.x, chart_h}, true, kCircuitScore);
  if (const auto shown = shown_snapshot(state)) story_box(state, *shown, true, false);
}

// A page about the heads: the thumbnails as large as the view allows (136 px at 1280x720 in presentation mode), the
// charts folded to the story under them in five lines (the evaluation loss, each change of role; the rest scrolls).
// Beside them the story would leave the thumbnails a third of the width.
void heads_page(AppState& state) {
  const auto shown = shown_snapshot(state);
  if (!shown) return;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float story_h = st.WindowPadding.y + 5 * ImGui::GetTextLineHeightWithSpacing() - st.ItemSpacing.y;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  PushHeatmapVersion(reinterpret_cast<std::uintptr_t>(shown.get()));
  train_head_grid(state.train, *shown, {avail.x, std::max(avail.y - story_h - st.ItemSpacing.y, avail.y * 0.5f)});
  PopHeatmapVersion();
  story_box(state, *shown, false, false);
}

}  // namespace

void TrainPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Train", pos, size, ImGuiWindowFlags_NoTitleBar);
  if (!state.trainer.ready()) {  // the run starts before the next frame draws (AppState::poll), or says why not
    if (!state.train.error.empty()) TextWrappedAtSpaces("No run: " + state.train.error);
    ImGui::End();
    return;
  }
  const TrainSettings& s = state.trainer.settings();
  TitleText("Training on the " + std::string(to_string(s.run.task.kind)) + " task");
  const std::string model = trained_model_description(s) + "; batches of " + std::to_string(s.run.batch) +
                            ", AdamW lr " + general_number(s.run.adamw.lr) + ", seed " + std::to_string(s.run.seed);
  // A page with both charts needs the two lines of the model's description for them: it goes to the title's tooltip
  // (the lesson's first page says it).
  const TrainChart about = page_chart(state);
  if (about != TrainChart::LossAndScores) TextDisabledWrapped(model);
  else if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", model.c_str());
  run_controls(state);
  timeline(state);
  if (about != TrainChart::All) {
    if (about == TrainChart::Heads) heads_page(state);
    else if (about == TrainChart::LossAndScores) loss_and_scores_page(state);
    else chart_page(state, about);
    ImGui::End();
    return;
  }
  // Two columns where they fit: the curves over the steps on the left; the heads at the snapshot shown, and what
  // they became, on the right. Beside a lesson's column: the two charts side by side above the heads.
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  const ImVec2 gap = ImGui::GetStyle().ItemSpacing;
  const bool two_columns = avail_w >= 44.0f * ImGui::GetFontSize();
  // A lesson page about the gradient is about one row's strips, not the run's curves: they take the room.
  const bool gradient_page = state.lesson.open() && state.lesson.current_page().train_gradient.has_value();
  if (!gradient_page && two_columns) {
    const float left_w = (avail_w - gap.x) * 0.52f, chart_h = (avail_h - gap.y) * 0.5f;
    ImGui::BeginChild("curves", {left_w, avail_h}, false, ImGuiWindowFlags_NoScrollbar);
    loss_chart(state, {left_w, chart_h}, false);
    score_chart(state, {left_w, chart_h}, false);
    ImGui::EndChild();
    ImGui::SameLine();
  } else if (!gradient_page) {
    // Half the height: the score chart names its eight heads at their lines' ends, one line of text apart.
    const float chart_w = (avail_w - gap.x) * 0.5f, chart_h = std::max(11.0f * ImGui::GetFontSize(), avail_h * 0.5f);
    ImGui::BeginGroup();
    loss_chart(state, {chart_w, chart_h}, false);
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    score_chart(state, {chart_w, chart_h}, false);
    ImGui::EndGroup();
  }
  // Sized to fit (the story and the gradient scroll in children of their own): a scrollbar coming and going here
  // would resize the heads every other frame.
  ImGui::BeginChild("snapshot", {0, 0}, false, ImGuiWindowFlags_NoScrollbar);
  const float tabs_h = ImGui::GetContentRegionAvail().y;
  if (const auto shown = shown_snapshot(state); shown && ImGui::BeginTabBar("snapshot tabs")) {
    TrainView& v = state.train;
    const bool select = std::exchange(v.select_tab, false);
    const auto flags = [&](bool gradient) {
      return select && v.gradient_tab == gradient ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    if (ImGui::BeginTabItem("The heads", nullptr, flags(false))) {
      if (!select) v.gradient_tab = false;
      PushHeatmapVersion(reinterpret_cast<std::uintptr_t>(shown.get()));
      if (two_columns) {
        train_head_grid(v, *shown, {ImGui::GetContentRegionAvail().x, tabs_h * 0.55f});
        ImGui::Spacing();
      } else {  // the heads as tall as the tab, what happened beside them
        ImGui::BeginGroup();
        train_head_grid(v, *shown, {ImGui::GetContentRegionAvail().x * 0.62f, ImGui::GetContentRegionAvail().y});
        ImGui::EndGroup();
        ImGui::SameLine();
      }
      PopHeatmapVersion();
      story_box(state, *shown, false, true);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("The gradient", nullptr, flags(true))) {
      if (!select) v.gradient_tab = true;
      // Its scrollbar always there: the heatmaps' heights follow the width, which a scrollbar coming and going would
      // change every other frame.
      ImGui::BeginChild("gradient", {0, 0}, false,
                        ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_AlwaysVerticalScrollbar);
      PushHeatmapVersion(0);
      gradient(v, state.train_gradients, shown, gradient_page);
      PopHeatmapVersion();
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn::ui
