// A lesson page: its title and text, the way to the next page, and its experiment when it has one.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "ui/cell_format.h"
#include "ui/chart_axes.h"
#include "ui/hover_text.h"
#include "ui/layout_check_frame.h"
#include "ui/lesson_nav.h"
#include "ui/layout_check.h"
#include "ui/panels.h"
#include "ui/text.h"
#include "ui/theme.h"

namespace attn::ui {
namespace {

void navigation(AppState& state, const Lesson& l) {
  const int n = static_cast<int>(l.pages.size());
  ImGui::BeginDisabled(state.lesson_page == 0);
  if (ImGui::Button("\u25C0 Previous")) GoToLessonPage(state, state.lesson, state.lesson_page - 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::Text("page %d of %d", state.lesson_page + 1, n);
  ImGui::SameLine();
  ImGui::BeginDisabled(state.lesson_page + 1 >= n);
  if (ImGui::Button("Next \u25B6")) GoToLessonPage(state, state.lesson, state.lesson_page + 1);
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

// Histogram bars on a shared count scale, with their range written under them.
void histogram_plot(const char* label, const Histogram& h, float width, float height, float most) {
  std::vector<float> counts(h.counts.begin(), h.counts.end());
  ImGui::PlotHistogram(label, counts.data(), static_cast<int>(counts.size()), 0, nullptr, 0.0f, most, {width, height});
  ImGui::TextDisabled("%s \u2026 %s", short_number(h.lo).c_str(), short_number(h.hi).c_str());
}

// Three decimals, or four where three would say little or read as a whole number (a saturated row's 0.0008
// and 0.9999).
std::string experiment_number(double x) {
  const std::string three = format_fixed(x, 3);
  return std::abs(x) < 0.01 || std::stod(three) == std::round(x) ? format_fixed(x, 4) : three;
}

void sqrt_dk_experiment(AppState& state) {
  ImGui::Separator();
  TextWrappedAtSpaces("Experiment: random queries and keys with unit-variance components");
  ImGui::TextUnformatted("d_k:");
  for (int d : kSqrtDkChoices) {
    ImGui::SameLine();
    if (ImGui::RadioButton(std::to_string(d).c_str(), state.sqrt_dk == d)) state.sqrt_dk = d;
  }
  const int d_k = state.sqrt_dk;
  const DotProductSample s = sample_dot_products(d_k, kSqrtDkPairs, kSqrtDkSeed);
  // One x axis for both, wide enough for the raw spread: scaled, the same values shrink to the middle.
  const double spread = 4.0 * std::sqrt(static_cast<double>(d_k));
  const Histogram raw = histogram(s.raw, -spread, spread, 41), scaled = histogram(s.scaled, -spread, spread, 41);
  float most = 1;
  for (const Histogram* h : {&raw, &scaled})
    for (const auto c : h->counts) most = std::max(most, static_cast<float>(c));
  // The plots share what the text lines leave (title, d_k, captions, ranges, the note, the softmax captions),
  // histograms to softmax rows as 1 : 0.45, so the scaled row's numbers stay in view.
  const float line = ImGui::GetTextLineHeightWithSpacing(), avail = ImGui::GetContentRegionAvail().y;
  const float w = (ImGui::GetContentRegionAvail().x - 16) / 2, h = std::clamp((avail - 11 * line) / 1.45f, 2.5f * line, 0.3f * std::max(avail, 1.0f));
  ImGui::BeginGroup();
  TextWrappedAtSpaces("q\u00B7k, raw: variance " + short_number(sample_variance(s.raw)));
  histogram_plot("##raw", raw, w, h, most);
  ImGui::EndGroup();
  ImGui::SameLine(0, 16);
  ImGui::BeginGroup();
  TextWrappedAtSpaces("q\u00B7k / \u221A" + std::to_string(d_k) + ": variance " + short_number(sample_variance(s.scaled)));
  histogram_plot("##scaled", scaled, w, h, most);
  ImGui::EndGroup();
  TextDisabledWrapped(format_exact(kSqrtDkPairs, AxisUnit::Plain) + " pairs each, on one axis: the raw spread grows like \u221Ad_k, "
                      "the scaled one stays at about 1.");
  TextWrappedAtSpaces("softmax of one query over " + std::to_string(kSqrtDkKeys) + " keys (an even row has entropy ln " +
                      std::to_string(kSqrtDkKeys) + " = " + experiment_number(std::log(static_cast<double>(kSqrtDkKeys))) + " nats)");
  for (bool scaled : {false, true}) {
    const SoftmaxRow row = softmax_of_sample_row(d_k, kSqrtDkKeys, scaled, kSqrtDkSeed);
    std::vector<float> weights(row.weights.begin(), row.weights.end());
    if (scaled) ImGui::SameLine(0, 16);
    ImGui::BeginGroup();
    const std::string caption = std::string(scaled ? "scaled" : "raw") + ": entropy " + experiment_number(row.entropy) +
                                " nats, largest weight " + experiment_number(row.max_weight);
    for (const std::string& text : WrapAtSpaces(caption, w)) ImGui::TextUnformatted(text.c_str());  // within its column
    ImGui::PlotHistogram(scaled ? "##row_scaled" : "##row_raw", weights.data(), static_cast<int>(weights.size()), 0, nullptr, 0.0f,
                         1.0f, {w, h * 0.45f});
    ImGui::EndGroup();
  }
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
  for (const char* b : {"\u25C0 Previous", "Next \u25B6", "Close lesson"}) w += ImGui::CalcTextSize(b).x + 2 * st.FramePadding.x + st.ItemSpacing.x;
  return w + ImGui::CalcTextSize("page 10 of 10").x + st.ItemSpacing.x;
}

Header header(const AppState& state, const LessonPage& p, float content_w) {
  const Lesson& l = state.lessons[static_cast<std::size_t>(state.lesson)];
  Header h;
  const std::string full = "Lesson " + std::to_string(state.lesson + 1) + ": " + l.title;
  h.lesson_line = ImGui::CalcTextSize(full.c_str()).x > content_w;
  h.bar = h.lesson_line ? "Lesson " + std::to_string(state.lesson + 1) : full;
  ImGui::PushFont(title_font());
  h.nav_beside = ImGui::CalcTextSize(p.title.c_str()).x + 3 * ImGui::GetStyle().ItemSpacing.x + navigation_width() <= content_w;
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
  const Lesson& l = state.lessons[static_cast<std::size_t>(state.lesson)];
  const LessonPage& p = l.pages[static_cast<std::size_t>(state.lesson_page)];
  const ImGuiStyle& style = ImGui::GetStyle();
  const float wrap = width - 2 * style.WindowPadding.x;
  const Header hd = header(state, p, wrap - style.ScrollbarSize);
  // The lines the panel draws, counted as TextWrappedAtSpaces breaks them.
  const auto lines_h = [&](std::string_view t) {
    return static_cast<float>(WrapAtSpaces(t, wrap).size()) * ImGui::GetTextLineHeightWithSpacing();
  };
  float h = 2 * style.WindowPadding.y + ImGui::GetFrameHeight() /* title bar */ + style.ItemSpacing.y + 1 /* separator */;
  if (hd.lesson_line) h += lines_h(l.title);
  ImGui::PushFont(title_font());
  h += hd.nav_beside ? std::max(ImGui::GetTextLineHeight(), ImGui::GetFrameHeight()) + style.ItemSpacing.y
                     : lines_h(p.title) + ImGui::GetFrameHeightWithSpacing();
  ImGui::PopFont();
  return h + page_text_height(p, wrap) + 2;  // rounding of the child's height
}

void LessonPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  const Lesson& l = state.lessons[static_cast<std::size_t>(state.lesson)];
  const LessonPage& p = l.pages[static_cast<std::size_t>(state.lesson_page)];
  const Header hd = header(state, p, size.x - 2 * ImGui::GetStyle().WindowPadding.x - ImGui::GetStyle().ScrollbarSize);
  BeginPanel((hd.bar + "###Lesson").c_str(), pos, size);
  NoteLessonText(p.text);  // the layout check looks for every number it quotes
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
  const float text_h = p.experiment ? std::min(page_text_height(p, ImGui::GetContentRegionAvail().x) + 2, ImGui::GetContentRegionAvail().y * 0.55f)
                                    : ImGui::GetContentRegionAvail().y;
  ImGui::BeginChild("text", {0, text_h}, false);
  for (const std::string_view paragraph : paragraphs(p)) {
    TextWrappedAtSpaces(paragraph);
    ImGui::Spacing();
  }
  // A page's text is meant to be read whole while the class looks at the view beside it.
  if (ImGui::GetScrollMaxY() > 0 && ImGui::GetScrollY() < ImGui::GetScrollMaxY())
    ReportHere("page " + std::to_string(state.lesson_page + 1) + "'s text needs scrolling (" +
               std::to_string(static_cast<int>(ImGui::GetScrollMaxY())) + " px below the panel)");
  ImGui::EndChild();
  if (p.experiment == Experiment::SqrtDk) sqrt_dk_experiment(state);
  ImGui::End();
}

}  // namespace attn::ui
