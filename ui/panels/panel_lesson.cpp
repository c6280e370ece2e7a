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
#include "ui/logic/real_lesson.h"
#include "ui/panels/panels.h"
#include "ui/widgets/bar_chart.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"
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
  return percent_text(fraction) + " within \u00B1" + short_number(bound);
}

// What the samples of one d_k come to, raw [0] and scaled [1]: drawing 20,000 pairs of up to 1,024 numbers each
// takes longer than a frame, so each d_k is drawn once (six choices, a few kilobytes each).
struct SqrtDkNumbers {
  Histogram histogram[2];
  double variance[2], bound[2], within[2];
  SoftmaxRow row[2];
};

// Bins an eighth of a standard deviation of the raw values wide, edges at whole multiples of it: the ±2σ ticks fall on
// bin edges, and the scaled values (σ = 1 on an axis 8σ wide) still fill a dozen bins.
constexpr int kSqrtDkBins = 64;

const SqrtDkNumbers& sqrt_dk_numbers(int d_k) {
  static std::map<int, SqrtDkNumbers> drawn;
  if (const auto it = drawn.find(d_k); it != drawn.end()) return it->second;
  const DotProductSample s = sample_dot_products(d_k, kSqrtDkPairs, kSqrtDkSeed);
  // One x axis for both, wide enough for the raw spread: scaled, the same values shrink to the middle.
  const double sd = std::sqrt(static_cast<double>(d_k)), spread = 4.0 * sd;
  const std::vector<double>* samples[] = {&s.raw, &s.scaled};
  SqrtDkNumbers n;
  for (int i = 0; i < 2; ++i) {
    n.histogram[i] = histogram(*samples[i], -spread, spread, kSqrtDkBins);
    n.variance[i] = sample_variance(*samples[i]);
    n.bound[i] = i == 0 ? 2 * sd : 2.0;  // two standard deviations
    n.within[i] = fraction_within(*samples[i], n.bound[i]);
    n.row[i] = softmax_of_sample_row(d_k, kSqrtDkKeys, i == 1, kSqrtDkSeed);
  }
  return drawn.emplace(d_k, std::move(n)).first->second;
}

// A histogram as its frequency polygon: a point per bin at its middle, joined. Steps (bars' outlines) would turn square
// corners on short rises, which read as one stroke doubling back on itself.
Series histogram_line(const Histogram& h, std::string name, ImU32 colour, std::size_t index) {
  Series s{std::move(name), {}, {}, colour, series_style(index), {}};
  const double width = (h.hi - h.lo) / static_cast<double>(h.counts.size());
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    s.x.push_back(h.lo + width * (static_cast<double>(i) + 0.5));
    s.y.push_back(h.counts[i]);
  }
  return s;
}

// Where a histogram's line leaves the top of a scale ending at `top`, on the peak's right flank: the dot that carries
// the cut peak's height (right of the flank, the plot is clear; between the flanks there is no room for it).
ChartMark cut_peak_mark(const Series& s, double top, std::string label) {
  const auto peak = std::max_element(s.y.begin(), s.y.end());
  std::size_t i = static_cast<std::size_t>(peak - s.y.begin());
  while (i + 1 < s.y.size() && s.y[i + 1] > top) ++i;
  double x = s.x[i];
  if (i + 1 < s.y.size()) x += (s.x[i + 1] - s.x[i]) * (s.y[i] - top) / (s.y[i] - s.y[i + 1]);
  return {x, top, std::move(label), s.colour};
}

// The experiment's control: which d_k, on one line with what the experiment is.
void sqrt_dk_choice(AppState& state) {
  ImGui::Separator();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Experiment: random q and k, unit-variance components. d_k:");
  for (int d : kSqrtDkChoices) {
    ImGui::SameLine();
    if (ImGui::RadioButton(std::to_string(d).c_str(), state.lesson.sqrt_dk == d)) state.lesson.sqrt_dk = d;
  }
}

// Raw and scaled dot products as two histograms on one axis and one count scale; the ticks name ±2σ of each, the
// interval the legend says holds 95% of the values. The raw bins are σ/8 wide at every d_k, so the raw histogram
// peaks near 1,000 pairs while the scaled one, squeezed into a few bins, grows with d_k (about 19,000 at 1,024):
// the scale stops at twice the raw peak, so the raw shape stays readable, and the y title says where the cut
// scaled peak would be.
void sqrt_dk_histograms(AppState& state) {
  sqrt_dk_choice(state);
  const int d_k = state.lesson.sqrt_dk;
  const SqrtDkNumbers& n = sqrt_dk_numbers(d_k);
  const std::string root = "\u221A" + std::to_string(d_k);
  const std::string names[] = {"raw q\u00B7k", "q\u00B7k / " + root};
  std::vector<Series> series;
  double most[2] = {1, 1};
  for (int i = 0; i < 2; ++i) {
    series.push_back(histogram_line(
        n.histogram[i],
        names[i] + ": variance " + short_number(n.variance[i]) + ", " + share_within(n.within[i], n.bound[i]),
        variant_colour(i == 0 ? 0 : 1), static_cast<std::size_t>(i)));
    for (const int c : n.histogram[i].counts) most[i] = std::max(most[i], static_cast<double>(c));
  }
  LineChartOptions o;
  o.title = format_exact(kSqrtDkPairs, NumberUnit::Plain) + " dot products at d_k = " + std::to_string(d_k) +
            ", raw and divided by " + root;
  o.x = {n.histogram[0].lo, n.histogram[0].hi, AxisScale::Linear, NumberUnit::Plain, "q\u00B7k (one axis for both)"};
  o.y = nice_axis(0, std::min(std::max(most[0], most[1]), 2 * most[0]), AxisScale::Linear, NumberUnit::Plain,
                  "pairs per bin");
  std::vector<ChartMark> marks;
  if (most[1] > o.y.hi) {
    o.y.title += " (the scaled peak runs off the top)";
    marks.push_back(cut_peak_mark(series[1], o.y.hi, "peak " + format_exact(most[1], NumberUnit::Plain)));
  }
  o.marks = marks;
  o.y.lo = -0.03 * o.y.hi;  // empty bins a little above the frame, not lying on it
  std::vector<double> pins = {-n.bound[0], n.bound[0]};
  if (n.bound[0] != n.bound[1]) pins.insert(pins.begin() + 1, {-n.bound[1], n.bound[1]});
  o.x_pins = pins;
  o.size = {0, ImGui::GetContentRegionAvail().y - 2};
  // No stripes: where both histograms are near zero (the raw tails) a striped band read as a drawing fault; the
  // dashed scaled line lies on the raw one there, as it does on its own zeros.
  o.flags = LineChartFlags_PageChart;
  LineChart("##histograms", series, o);
}

// One softmax row as a bar per key, its weight written at the bar's end, on the weight axis 0 to 1 both rows share;
// the even row's 1/8 is the reference.
void softmax_row_chart(const char* id, const SoftmaxRow& row, ImU32 colour, float w, float h) {
  std::vector<Bar> bars;
  for (std::size_t j = 0; j < row.weights.size(); ++j)
    bars.push_back({"key " + std::to_string(j + 1), row.weights[j], colour, ""});
  const double even = 1.0 / static_cast<double>(row.weights.size());
  const ReferenceLine refs[] = {{even, "even " + probability_text(even)}};
  BarChartOptions o;
  o.unit = NumberUnit::Probability;
  o.size = {w, h};
  o.references = refs;
  o.axis_reach = 1.0;
  BarChart(id, bars, o);
  NoteChartPlotHere(id, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

// One query's softmax over the keys, raw and scaled side by side, each under a caption giving its entropy.
void sqrt_dk_softmax(AppState& state) {
  sqrt_dk_choice(state);
  const SqrtDkNumbers& n = sqrt_dk_numbers(state.lesson.sqrt_dk);
  TextWrappedAtSpaces("Softmax of one query over " + std::to_string(kSqrtDkKeys) +
                      " keys (an even row has entropy ln " + std::to_string(kSqrtDkKeys) + " = " +
                      experiment_number(std::log(static_cast<double>(kSqrtDkKeys))) + " nats)");
  const float gap = 2 * ImGui::GetStyle().ItemSpacing.x, w = (ImGui::GetContentRegionAvail().x - gap) / 2;
  std::vector<std::string> captions[2];
  for (int i = 0; i < 2; ++i)
    captions[i] =
        WrapAtSpaces(std::string(i == 1 ? "scaled" : "raw") + ": entropy " + experiment_number(n.row[i].entropy) +
                         " nats, largest weight " + probability_text(n.row[i].max_weight),
                     w);
  const std::size_t lines = std::max(captions[0].size(), captions[1].size());
  const ImVec2 top = ImGui::GetCursorPos();
  const float h =
      ImGui::GetContentRegionAvail().y - static_cast<float>(lines) * ImGui::GetTextLineHeightWithSpacing() - 2;
  for (int i = 0; i < 2; ++i) {
    // Placed, not SameLine: SameLine would shift its text to the baseline the first column's chart left.
    ImGui::SetCursorPos({top.x + static_cast<float>(i) * (w + gap), top.y});
    ImGui::BeginGroup();
    for (std::size_t k = 0; k < lines; ++k)
      ImGui::TextUnformatted(k < captions[i].size() ? captions[i][k].c_str() : "");
    softmax_row_chart(i == 0 ? "softmax, raw" : "softmax, scaled", n.row[i], variant_colour(i == 0 ? 0 : 1), w, h);
    ImGui::EndGroup();
  }
}

// A Real model page's live line: what the run on screen shows, quoted from it (ui/logic/real_lesson.h).
void live_line(const std::string& line) {
  if (line.empty()) return;
  ImGui::Separator();
  TextWrappedAtSpaces(line, accent_colour());
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
  if (p.view == View::Real) live_line(real_page_line(state.real_model, p));
  if (p.real_measure_sonnets) live_line(measure_page_line(state.real_model, state.tradeoff));
  // A page's text is meant to be read whole while the class looks at the view beside it.
  if (ImGui::GetScrollMaxY() > 0 && ImGui::GetScrollY() < ImGui::GetScrollMaxY())
    ReportHere("page " + std::to_string(state.lesson.page + 1) + "'s text needs scrolling (" +
               std::to_string(static_cast<int>(ImGui::GetScrollMaxY())) + " px below the panel)");
  ImGui::EndChild();
  if (p.experiment == Experiment::SqrtDk) sqrt_dk_histograms(state);
  if (p.experiment == Experiment::SqrtDkSoftmax) sqrt_dk_softmax(state);
  ImGui::End();
}

}  // namespace attn::ui
