// A lesson page: its title and text, the way to the next page, and its experiment when it has one.
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "core/text_format.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/lesson_nav.h"
#include "ui/panels/panels.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

void navigation(AppState& state, const Lesson& l) {
  const int n = static_cast<int>(l.pages.size());
  ImGui::BeginDisabled(state.lesson.page == 0);
  if (ImGui::Button("\u25C0 Previous")) GoToLessonPage(state, state.lesson.index, state.lesson.page - 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::Text("page %d of %d", state.lesson.page + 1, n);
  ImGui::SameLine();
  ImGui::BeginDisabled(state.lesson.page + 1 >= n);
  if (ImGui::Button("Next \u25B6")) GoToLessonPage(state, state.lesson.index, state.lesson.page + 1);
  ImGui::EndDisabled();
  // The hint and the close button go on the same line only where they fit.
  const float close_w = ImGui::CalcTextSize("Close lesson").x + 2 * ImGui::GetStyle().FramePadding.x;
  const float hint_w = ImGui::CalcTextSize("PageUp / PageDown").x;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  ImGui::SameLine();
  const float room = ImGui::GetWindowContentRegionMax().x - ImGui::GetCursorPosX();
  if (room > hint_w + close_w + 3 * gap) {
    ImGui::TextDisabled("PageUp / PageDown");
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - close_w);
  } else if (room < close_w + gap) {
    ImGui::NewLine();
  }
  if (ImGui::Button("Close lesson")) CloseLesson(state);
}

// An entropy with three decimals, or four where three would say little or read as a whole number (a saturated
// row's 0.0008 nats); its weights are probabilities (probability_text).
std::string experiment_number(double x) {
  const std::string three = format_fixed(x, 3);
  return std::abs(x) < 0.01 || std::stod(three) == std::round(x) ? format_fixed(x, 4) : three;
}

// "95.2% within ±16": two standard deviations either side hold what the lesson's "95% between" quotes.
std::string share_within(double fraction, double bound) {
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * fraction);
  return std::string(share) + " within \u00B1" + short_number(bound);
}

// One column of the experiment: a caption over a plot, and what goes under it.
struct ExperimentColumn {
  std::vector<std::string> caption;  // wrapped to the column
  std::vector<float> values;
  float most = 1;
  std::vector<std::string> under;  // wrapped to the column; none under the softmax rows
};

// The experiment's numbers for one d_k, as text and bars: raw and scaled histograms on one axis and one count
// scale, then one softmax row raw and scaled.
struct SqrtDkFigures {
  ExperimentColumn histogram[2], row[2];
  std::string note, row_title;
};

// What the samples of one d_k come to, raw [0] and scaled [1]: drawing 20,000 pairs of up to 1,024 numbers each
// takes longer than a frame, so each d_k is drawn once (six choices, a few kilobytes each).
struct SqrtDkNumbers {
  Histogram histogram[2];
  double variance[2], bound[2], within[2];
  SoftmaxRow row[2];
};

const SqrtDkNumbers& sqrt_dk_numbers(int d_k) {
  static std::map<int, SqrtDkNumbers> drawn;
  if (const auto it = drawn.find(d_k); it != drawn.end()) return it->second;
  const DotProductSample s = sample_dot_products(d_k, kSqrtDkPairs, kSqrtDkSeed);
  // One x axis for both, wide enough for the raw spread: scaled, the same values shrink to the middle.
  const double sd = std::sqrt(static_cast<double>(d_k)), spread = 4.0 * sd;
  const std::vector<double>* samples[] = {&s.raw, &s.scaled};
  SqrtDkNumbers n;
  for (int i = 0; i < 2; ++i) {
    n.histogram[i] = histogram(*samples[i], -spread, spread, 41);
    n.variance[i] = sample_variance(*samples[i]);
    n.bound[i] = i == 0 ? 2 * sd : 2.0;  // two standard deviations
    n.within[i] = fraction_within(*samples[i], n.bound[i]);
    n.row[i] = softmax_of_sample_row(d_k, kSqrtDkKeys, i == 1, kSqrtDkSeed);
  }
  return drawn.emplace(d_k, std::move(n)).first->second;
}

SqrtDkFigures experiment_for(int d_k, float column_w) {
  const SqrtDkNumbers& n = sqrt_dk_numbers(d_k);
  const std::string names[] = {"q\u00B7k, raw", "q\u00B7k / \u221A" + std::to_string(d_k)};
  SqrtDkFigures e;
  float most = 1;
  for (const Histogram& h : n.histogram)
    for (const int c : h.counts) most = std::max(most, static_cast<float>(c));
  for (int i = 0; i < 2; ++i) {
    ExperimentColumn& c = e.histogram[i];
    const Histogram& h = n.histogram[i];
    c.caption = WrapAtSpaces(names[i] + ": variance " + short_number(n.variance[i]), column_w);
    c.values.assign(h.counts.begin(), h.counts.end());
    c.most = most;
    c.under = WrapAtSpaces(
        short_number(h.lo) + " \u2026 " + short_number(h.hi) + "; " + share_within(n.within[i], n.bound[i]), column_w);
  }
  for (int i = 0; i < 2; ++i) {
    const SoftmaxRow& row = n.row[i];
    ExperimentColumn& c = e.row[i];
    c.caption = WrapAtSpaces(std::string(i == 1 ? "scaled" : "raw") + ": entropy " + experiment_number(row.entropy) +
                                 " nats, largest weight " + probability_text(row.max_weight),
                             column_w);
    c.values.assign(row.weights.begin(), row.weights.end());
  }
  e.note = format_exact(kSqrtDkPairs, AxisUnit::Plain) +
           " pairs each, on one axis: the raw spread grows like \u221Ad_k, the scaled one "
           "stays at about 1.";
  e.row_title = "softmax of one query over " + std::to_string(kSqrtDkKeys) + " keys (an even row has entropy ln " +
                std::to_string(kSqrtDkKeys) + " = " + experiment_number(std::log(static_cast<double>(kSqrtDkKeys))) +
                " nats)";
  return e;
}

// Two columns side by side, captions level with each other, plots `height` tall.
void draw_columns(const char* id, const ExperimentColumn (&columns)[2], float w, float height) {
  const std::size_t caption_lines = std::max(columns[0].caption.size(), columns[1].caption.size());
  const ImVec2 top = ImGui::GetCursorPos();
  for (int i = 0; i < 2; ++i) {
    const ExperimentColumn& c = columns[i];
    // Placed, not SameLine: SameLine would shift its text to the baseline the first column's plot left.
    if (i == 1) ImGui::SetCursorPos({top.x + w + 16, top.y});
    ImGui::BeginGroup();
    for (std::size_t k = 0; k < caption_lines; ++k)
      ImGui::TextUnformatted(k < c.caption.size() ? c.caption[k].c_str() : "");
    ImGui::PushID(i);
    ImGui::PlotHistogram(id, c.values.data(), static_cast<int>(c.values.size()), 0, nullptr, 0.0f, c.most, {w, height});
    ImGui::PopID();
    for (const std::string& line : c.under) ImGui::TextDisabled("%s", line.c_str());
    ImGui::EndGroup();
  }
}

void sqrt_dk_experiment(AppState& state) {
  ImGui::Separator();
  TextWrappedAtSpaces("Experiment: random queries and keys with unit-variance components");
  ImGui::TextUnformatted("d_k:");
  for (int d : kSqrtDkChoices) {
    ImGui::SameLine();
    if (ImGui::RadioButton(std::to_string(d).c_str(), state.lesson.sqrt_dk == d)) state.lesson.sqrt_dk = d;
  }
  const float full_w = ImGui::GetContentRegionAvail().x, w = (full_w - 16) / 2;
  const SqrtDkFigures e = experiment_for(state.lesson.sqrt_dk, w);
  // The plots share what the text leaves, histograms to softmax rows as 1 : 0.45, so every number stays in view.
  const float line = ImGui::GetTextLineHeightWithSpacing(), gap = ImGui::GetStyle().ItemSpacing.y;
  const auto lines = [](const ExperimentColumn(&c)[2], auto part) {
    return static_cast<float>(std::max((c[0].*part).size(), (c[1].*part).size()));
  };
  const float text_h =
      line * (lines(e.histogram, &ExperimentColumn::caption) + lines(e.histogram, &ExperimentColumn::under) +
              lines(e.row, &ExperimentColumn::caption) +
              static_cast<float>(WrapAtSpaces(e.note, full_w).size() + WrapAtSpaces(e.row_title, full_w).size())) +
      2 * gap;
  const float avail = ImGui::GetContentRegionAvail().y;
  const float h = std::clamp((avail - text_h) / 1.45f, 2.5f * line, 0.3f * std::max(avail, 1.0f));
  draw_columns("##histogram", e.histogram, w, h);
  TextDisabledWrapped(e.note);
  TextWrappedAtSpaces(e.row_title);
  draw_columns("##row", e.row, w, h * 0.45f);
}

// Where the header's parts go at a content width: the lesson's title in the title bar where it fits there (else
// on a line of its own), the page buttons beside the page's title where both fit (else below it).
struct Header {
  std::string bar;  // the title bar's text
  bool lesson_line = false;
  bool nav_beside = false;
};

float navigation_width() {
  const ImGuiStyle& st = ImGui::GetStyle();
  float w = 0;
  for (const char* b : {"\u25C0 Previous", "Next \u25B6", "Close lesson"})
    w += ImGui::CalcTextSize(b).x + 2 * st.FramePadding.x + st.ItemSpacing.x;
  return w + ImGui::CalcTextSize("page 10 of 10").x + st.ItemSpacing.x;
}

Header header(const AppState& state, const LessonPage& p, float content_w) {
  const Lesson& l = state.lesson.current();
  Header h;
  const std::string full = "Lesson " + std::to_string(state.lesson.index + 1) + ": " + l.title;
  h.lesson_line = ImGui::CalcTextSize(full.c_str()).x > content_w;
  h.bar = h.lesson_line ? "Lesson " + std::to_string(state.lesson.index + 1) : full;
  ImGui::PushFont(title_font());
  h.nav_beside =
      ImGui::CalcTextSize(p.title.c_str()).x + 3 * ImGui::GetStyle().ItemSpacing.x + navigation_width() <= content_w;
  ImGui::PopFont();
  return h;
}

// A page's paragraphs: its text split at blank lines.
std::vector<std::string_view> paragraphs(const LessonPage& p) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start <= p.text.size();) {
    const std::size_t end = std::min(p.text.find("\n\n", start), p.text.size());
    out.push_back(std::string_view(p.text).substr(start, end - start));
    start = end + 2;
  }
  return out;
}

// The height of a page's paragraphs, wrapped at `wrap` as TextWrappedAtSpaces breaks them, with their spacing.
float page_text_height(const LessonPage& p, float wrap) {
  float h = 0;
  for (const std::string_view paragraph : paragraphs(p))
    h += static_cast<float>(WrapAtSpaces(paragraph, wrap).size()) * ImGui::GetTextLineHeightWithSpacing() +
         ImGui::GetStyle().ItemSpacing.y;  // and Spacing()
  return h;
}

}  // namespace

float LessonPanelHeight(const AppState& state, float width) {
  const Lesson& l = state.lesson.current();
  const LessonPage& p = state.lesson.current_page();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float wrap = width - 2 * style.WindowPadding.x;
  const Header hd = header(state, p, wrap - style.ScrollbarSize);
  // The lines the panel draws, counted as TextWrappedAtSpaces breaks them.
  const auto lines_h = [&](std::string_view t) {
    return static_cast<float>(WrapAtSpaces(t, wrap).size()) * ImGui::GetTextLineHeightWithSpacing();
  };
  float h =
      2 * style.WindowPadding.y + ImGui::GetFrameHeight() /* title bar */ + style.ItemSpacing.y + 1 /* separator */;
  if (hd.lesson_line) h += lines_h(l.title);
  ImGui::PushFont(title_font());
  h += hd.nav_beside ? std::max(ImGui::GetTextLineHeight(), ImGui::GetFrameHeight()) + style.ItemSpacing.y
                     : lines_h(p.title) + ImGui::GetFrameHeightWithSpacing();
  ImGui::PopFont();
  return h + page_text_height(p, wrap) + 2;  // rounding of the child's height
}

void LessonPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  const Lesson& l = state.lesson.current();
  const LessonPage& p = state.lesson.current_page();
  const Header hd = header(state, p, size.x - 2 * ImGui::GetStyle().WindowPadding.x - ImGui::GetStyle().ScrollbarSize);
  BeginPanel((hd.bar + "###Lesson").c_str(), pos, size);
  NoteLessonText(p.text);                            // the layout check looks for every number it quotes
  if (hd.lesson_line) TextDisabledWrapped(l.title);  // the title bar already says "Lesson N"
  ImGui::PushFont(title_font());
  if (hd.nav_beside) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(p.title.c_str());
  } else {
    TextWrappedAtSpaces(p.title);
  }
  ImGui::PopFont();
  if (hd.nav_beside) ImGui::SameLine(0, 3 * ImGui::GetStyle().ItemSpacing.x);
  navigation(state, l);
  ImGui::Separator();
  // An experiment takes what the text leaves, the text at most 55% of the panel.
  const float text_h = p.experiment ? std::min(page_text_height(p, ImGui::GetContentRegionAvail().x) + 2,
                                               ImGui::GetContentRegionAvail().y * 0.55f)
                                    : ImGui::GetContentRegionAvail().y;
  ImGui::BeginChild("text", {0, text_h}, false);
  for (const std::string_view paragraph : paragraphs(p)) {
    TextWrappedAtSpaces(paragraph);
    ImGui::Spacing();
  }
  // A page's text is meant to be read whole while the class looks at the view beside it.
  if (ImGui::GetScrollMaxY() > 0 && ImGui::GetScrollY() < ImGui::GetScrollMaxY())
    ReportHere("page " + std::to_string(state.lesson.page + 1) + "'s text needs scrolling (" +
               std::to_string(static_cast<int>(ImGui::GetScrollMaxY())) + " px below the panel)");
  ImGui::EndChild();
  if (p.experiment == Experiment::SqrtDk) sqrt_dk_experiment(state);
  ImGui::End();
}

}  // namespace attn::ui
