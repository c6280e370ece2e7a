#include "ui/widgets/equation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

#include "ui/logic/cell_format.h"
#include "ui/logic/decode_layout.h"
#include "ui/logic/glyph_set.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/heatmap_layout.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

// Below this many pixels a cell can no longer show its number, so a long equation wraps onto two lines.
constexpr float kWrapBelowCell = 30.0f;

// The narrowest a term's cells are drawn together, in font heights, where its width allows.
constexpr float kMinTermGrid = 2.5f;

// What is written over a term: its name and shape.
std::string term_title(const Term& t) { return t.name + " " + shape_text(t.whole ? *t.whole : *t.m); }

// The narrowest a term may be: its title and its legend (or, without one, four font heights) must fit. A title wider
// than its share pushed the terms after it off the panel (8 heads' outputs in presentation mode showed 6).
float term_min(const Term& t) {
  const float title = ImGui::CalcTextSize(term_title(t).c_str()).x + 4;
  return std::max(title, ImGui::GetFontSize() * ((t.flags & HeatmapFlags_NoLegend) ? 4.0f : 9.0f));
}

// Whether some term of [first, last) has a colour bar.
bool has_legend(std::span<const Term> terms, std::size_t first, std::size_t last) {
  return std::any_of(terms.begin() + static_cast<std::ptrdiff_t>(first),
                     terms.begin() + static_cast<std::ptrdiff_t>(last),
                     [](const Term& t) { return !(t.flags & HeatmapFlags_NoLegend); });
}

// Whether a term writes numbers in its cells.
bool term_shows_numbers(const Term& t) { return !(t.flags & HeatmapFlags_NoValues) && HeatmapShowsNumbers(*t.m); }

// A column at least `cell` wide, widened for the term's numbers and for its column labels (written whole).
float column_width(const Term& t, float cell) {
  float column = std::max(cell, HeatmapValueWidth(*t.m, t.visible));
  if (t.cols)
    for (const std::string& label : *t.cols)
      column = std::max(column, ImGui::CalcTextSize(label.c_str()).x + kLabelGap);
  return column;
}

// What a term's columns need to show their numbers and labels, plus its row labels: a result of 3-decimal values
// gets more of the line than an operand of small integers. Large matrices show no numbers: columns only.
float term_need(const Term& t) {
  const float em = ImGui::GetFontSize();
  if (!term_shows_numbers(t)) return em * (static_cast<float>(t.m->cols()) + 2.5f);
  return column_width(t, 1.8f * em) * static_cast<float>(t.m->cols()) + 2.5f * em;
}

// The widths of terms [first, last) sharing `avail`: each its minimum, and what is left in proportion to what
// each needs beyond it. Empty when even the minimums do not fit.
std::vector<float> term_widths(std::span<const Term> terms, std::size_t first, std::size_t last, float avail) {
  float mins = 0, extra_need = 0;
  for (std::size_t i = first; i < last; ++i) {
    mins += term_min(terms[i]);
    extra_need += std::max(0.0f, term_need(terms[i]) - term_min(terms[i])) + 1.0f;
  }
  if (mins > avail) return {};
  std::vector<float> w;
  for (std::size_t i = first; i < last; ++i)
    w.push_back(term_min(terms[i]) +
                (avail - mins) * (std::max(0.0f, term_need(terms[i]) - term_min(terms[i])) + 1.0f) / extra_need);
  return w;
}

// The product dot, drawn as a disc (as a glyph too small to see from the back of a room).
constexpr std::string_view kProductDot = "\u00B7";

// The product dot is drawn with room on each side: a dot right before the next term's row labels reads as a bullet
// ("• 1"). Call with the title font pushed.
float operator_width(const std::string& op) {
  const float w = ImGui::CalcTextSize(op.c_str()).x;
  return op == kProductDot ? w + ImGui::GetFontSize() : w;
}

// Drawn at height y (the middle of the terms) from the line's top: ImGui's cursor stays on the line, so the
// group of terms after it does not start lower and reach past the panel.
void draw_operator(const std::string& op, float y) {
  ImGui::PushFont(title_font());
  const ImVec2 at = ImGui::GetCursorScreenPos();
  // An operator of two lines ("softmax\nby row →") is centred on y as a block: narrower than one long line.
  const ImVec2 size = ImGui::CalcTextSize(op.c_str());
  const float w = operator_width(op), line_h = ImGui::GetTextLineHeight();
  const float top = at.y + (y - ImGui::GetCursorPosY()) - size.y / 2;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (op == kProductDot) {
    dl->AddCircleFilled({at.x + w / 2, top + line_h / 2}, 4.5f, ImGui::GetColorU32(ImGuiCol_Text));
  } else {
    std::size_t start = 0;  // each line centred
    for (float ly = top; start <= op.size(); ly += line_h) {
      const std::size_t end = std::min(op.find('\n', start), op.size());
      const std::string line = op.substr(start, end - start);
      dl->AddText({at.x + (w - ImGui::CalcTextSize(line.c_str()).x) / 2, ly}, ImGui::GetColorU32(ImGuiCol_Text),
                  line.c_str());
      start = end + 1;
    }
  }
  ImGui::Dummy({w, 1});
  ImGui::PopFont();
}

float operators_width(std::span<const std::string> ops, float gap) {
  ImGui::PushFont(title_font());
  float w = 0;
  for (const std::string& op : ops) w += operator_width(op) + 2 * gap;
  ImGui::PopFont();
  return w;
}

// The width a term takes at cell size `cell`: its title, or its row labels and cells (widened for its numbers).
float flow_width(const Term& t, float cell) {
  float label_w = 0;
  if (!(t.flags & (HeatmapFlags_NoLabels | HeatmapFlags_NoRowLabels))) {
    for (Eigen::Index r = 0; r < t.m->rows(); ++r)
      label_w = std::max(label_w, ImGui::CalcTextSize(HeatmapLabel(t.rows, r).c_str()).x);
    label_w += 0.5f * ImGui::GetTextLineHeight();
  }
  const float cells = static_cast<float>(t.m->cols()) * column_width(t, cell);
  return std::max(ImGui::CalcTextSize(term_title(t).c_str()).x, label_w + cells) + 4;
}

// Whether a flowing term reads its rows off the term before it (K, V and K of the next KV head: the cached tokens;
// each head's attention row: the new token), and so leaves out its row labels unless it starts a line.
bool shares_rows(std::span<const Term> terms, std::size_t i) {
  return i > 0 && terms[i].rows && terms[i].rows == terms[i - 1].rows && terms[i].m->rows() == terms[i - 1].m->rows() &&
         terms[i].row_slots.empty() && terms[i - 1].row_slots.empty();
}
Term without_row_labels(const Term& t) {
  Term bare = t;
  bare.flags |= HeatmapFlags_NoRowLabels;
  return bare;
}

// The numbered terms of a line share their width so that their cells are one size where the line's height allows:
// the largest cell at which what they need (cells as wide as their numbers, each no taller than the height lets its
// rows be) still fits the width they were given together, the little left over in proportion. Shares by need alone
// drew the cat sat's mask 78 pixels a cell beside scaled and masked at 87, and lesson 6 page 3's latent at -0.6 for
// -0.57 beside the unused part of X's share. `grid_h`: the height the line gives its terms' cells.
void share_widths(std::span<const Term> terms, std::size_t first, float grid_h, float max_cell,
                  std::vector<float>& widths) {
  float given = 0;
  for (std::size_t i = 0; i < widths.size(); ++i)
    if (term_shows_numbers(terms[first + i])) given += widths[i];
  if (given <= 0) return;
  const auto needs = [&](float cell, std::vector<float>* each) {
    float sum = 0;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const Term& t = terms[first + i];
      if (!term_shows_numbers(t)) continue;
      const float need =
          std::max(flow_width(t, std::min({cell, max_cell, grid_h / static_cast<float>(t.m->rows())})), term_min(t));
      if (each) (*each)[i] = need;
      sum += need;
    }
    return sum;
  };
  if (needs(0.0f, nullptr) > given) return;  // not even their numbers' widths fit: the shares stand
  float lo = 0.0f, hi = max_cell;
  for (int k = 0; k < 24; ++k) {
    const float mid = (lo + hi) / 2;
    (needs(mid, nullptr) <= given ? lo : hi) = mid;
  }
  std::vector<float> need(widths.size(), 0.0f);
  const float total = needs(lo, &need);
  for (std::size_t i = 0; i < widths.size(); ++i)
    if (need[i] > 0) widths[i] = need[i] + (given - total) * need[i] / total;
}

// One line of an equation's terms, [first, last), and how its terms are sized.
struct EquationLine {
  std::size_t first = 0, last = 0;
  const std::string* lead = nullptr;  // an operator written before the first term (a wrapped line)
  float height = 0;                   // the line's, the terms' titles included
  float max_cell = 0;                 // the heatmaps' largest cell at the body font's size
  float flow_cell = 0;                // > 0: a flowing line, each term as wide as its cells at this size need
  bool result_leads = false;          // the result is the first term (result_first), not the last
};

// The line's terms as drawn: a flowing term beside one with the same rows without their labels (shares_rows).
std::vector<Term> line_terms(std::span<const Term> terms, const EquationLine& l) {
  std::vector<Term> line(terms.begin() + static_cast<std::ptrdiff_t>(l.first),
                         terms.begin() + static_cast<std::ptrdiff_t>(l.last));  // line[i - first]
  if (l.flow_cell > 0)
    for (std::size_t i = l.first + 1; i < l.last; ++i)
      if (shares_rows(terms, i)) line[i - l.first] = without_row_labels(terms[i]);
  return line;
}

// Each term's width: what it needs at the flow's cell size, or a share of the line's width.
std::vector<float> line_widths(std::span<const Term> terms, std::span<const std::string> ops,
                               const std::vector<Term>& line, const EquationLine& l, float body_h, float legend_h) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float ops_w = operators_width(ops.subspan(l.first, l.last - l.first - 1), gap) +
                      (l.lead ? operators_width(std::span(l.lead, 1), gap) : 0.0f);
  std::vector<float> widths;
  if (l.flow_cell > 0)
    for (const Term& t : line) widths.push_back(flow_width(t, l.flow_cell));
  else
    widths = term_widths(terms, l.first, l.last,
                         ImGui::GetContentRegionAvail().x - ops_w - gap * static_cast<float>(l.last - l.first));
  if (widths.empty()) widths.assign(l.last - l.first, 60.0f);  // nothing fits: the panel scrolls
  if (l.flow_cell <= 0)
    share_widths(terms, l.first, body_h - legend_h - ImGui::GetTextLineHeight() - 2,
                 l.max_cell * ImGui::GetFontSize() / kBodyPixels, widths);
  return widths;
}

// A term's heatmap `width` wide in a body `body_h` high, leaving a colour bar's room where it has none.
HeatmapOptions term_heatmap(const Term& t, float width, float body_h, float legend_h, float max_cell) {
  HeatmapOptions o;
  o.row_labels = t.rows;
  o.col_labels = t.cols;
  o.map = t.map;
  o.visible = t.visible;
  o.range = t.range;
  o.highlight_row = t.highlight_row;
  o.highlight_col = t.highlight_col;
  o.selected_row = t.selected_row;
  o.selected_col = t.selected_col;
  o.outlined = t.outlined;
  o.outlined_col0 = t.outlined_col0;
  o.row_slots = t.row_slots;
  o.col_slots = t.col_slots;
  o.flags = t.flags | HeatmapFlags_StretchTall;
  o.size = {width, (t.flags & HeatmapFlags_NoLegend) ? body_h - legend_h : body_h};
  o.max_cell = max_cell;
  o.min_width = kMinTermGrid * ImGui::GetFontSize();  // a tall, narrow term (q of 4,096 rows) stays seen
  return o;
}

// One line of terms and the operators between them.
void draw_line(std::span<const Term> terms, std::span<const std::string> ops, const EquationLine& l,
               EquationHover& hover) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const std::vector<Term> line = line_terms(terms, l);
  const float title_h = ImGui::GetTextLineHeightWithSpacing();
  const float body_h = l.height - title_h;
  // Terms without a colour bar on a line with one (heads sharing one range, the bar under the last) leave its room
  // empty, so that the grids side by side are equally tall.
  const float legend_h = has_legend(terms, l.first, l.last) ? legend_height(ImGui::GetTextLineHeight()) : 0.0f;
  const std::vector<float> widths = line_widths(terms, ops, line, l, body_h, legend_h);
  const float top = ImGui::GetCursorPosY();
  const float op_y = top + title_h + body_h * 0.38f;
  if (l.lead) {
    draw_operator(*l.lead, op_y);
    ImGui::SameLine(0, gap);
    ImGui::SetCursorPosY(top);
  }
  const std::size_t result = l.result_leads ? 0 : terms.size() - 1;
  for (std::size_t i = l.first; i < l.last; ++i) {
    const Term& t = line[i - l.first];
    if (i > l.first) {
      ImGui::SameLine(0, gap);
      draw_operator(ops[i - 1], op_y);
      ImGui::SameLine(0, gap);
      ImGui::SetCursorPosY(top);
    }
    ImGui::BeginGroup();
    if (i == result) hover.result_y = ImGui::GetCursorScreenPos().y;
    // The caller's index, whichever order the terms are drawn in: a term keeps its ImGui id and texture when its
    // formula starts or stops leading with its result.
    const std::size_t caller = l.result_leads ? (i == 0 ? terms.size() - 1 : i - 1) : i;
    ImGui::PushID(static_cast<int>(caller));
    ImGui::TextUnformatted(term_title(t).c_str());
    const HeatmapResult r =  // the name also names an exported picture
        Heatmap(t.name.c_str(), *t.m, term_heatmap(t, widths[i - l.first], body_h, legend_h, l.max_cell));
    if (r.hovered_row >= 0) {
      hover.term = static_cast<int>(i);
      hover.row = r.hovered_row;
      hover.col = r.hovered_col;
      hover.clicked = r.clicked;
    }
    // The result's: the last term, after its addends, or the first where it leads (result_first).
    if (r.outlined_y >= 0 && !(l.result_leads && hover.outlined_y >= 0)) hover.outlined_y = r.outlined_y;
    ImGui::PopID();
    ImGui::EndGroup();
    if (hover.boxes.size() < terms.size()) hover.boxes.resize(terms.size(), {{-1, -1}, {-1, -1}});
    hover.boxes[caller] = {ImGui::GetItemRectMin(), ImGui::GetItemRectMax()};
    if (i == result) {
      hover.result_min = ImGui::GetItemRectMin();
      hover.result_max = ImGui::GetItemRectMax();
    }
  }
}

// Whether a wrapped line starts with the operator before its first term: "=" does, a space between terms does not.
bool leads(const std::string& op) { return op.find_first_not_of(' ') != std::string::npos; }

// The lines EquationFlow fills at cell size `cell` in `width`: as many terms as fit, at least one each.
struct FlowLine {
  std::size_t first, last;
  float height;
};
std::vector<FlowLine> flow_lines(std::span<const Term> terms, std::span<const std::string> ops, float cell,
                                 float width) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  std::vector<float> widths, first_widths, op_widths, lead_widths;
  std::vector<bool> joined;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    first_widths.push_back(flow_width(terms[i], cell));
    widths.push_back(shares_rows(terms, i) ? flow_width(without_row_labels(terms[i]), cell) : first_widths.back());
    joined.push_back(terms[i].joined);
    if (i + 1 >= terms.size()) continue;
    op_widths.push_back(operators_width(ops.subspan(i, 1), gap));
    lead_widths.push_back(leads(ops[i]) ? op_widths.back() : 0.0f);
  }
  std::vector<FlowLine> lines;
  for (const FlowBreak& b : flow_breaks(widths, op_widths, lead_widths, joined, width, first_widths)) {
    Eigen::Index rows = 0;
    bool legend = false, header = false;
    for (std::size_t i = b.first; i < b.last; ++i) {
      rows = std::max(rows, terms[i].m->rows());
      legend = legend || !(terms[i].flags & HeatmapFlags_NoLegend);
      header = header || !(terms[i].flags & HeatmapFlags_NoColumnLabels);
    }
    lines.push_back({b.first, b.last,
                     line /* title */ + (header ? line : 0.0f) /* column labels */ + static_cast<float>(rows) * cell +
                         (legend ? 1.5f * line + 14 : 0.0f)});
  }
  return lines;
}

// How far, with `per_line` terms a line, the most cramped numbered term falls short of the width its numbers need
// at the matrix's decimals, as need / share (above 1: it would show 0.74 for 0.738, or dots; infinite when even
// the minimums do not fit).
float numbers_shortfall(std::span<const Term> terms, std::span<const std::string> ops, std::size_t per_line,
                        float width) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  float worst = 0;
  for (std::size_t first = 0; first < terms.size(); first += per_line) {
    const std::size_t last = std::min(terms.size(), first + per_line);
    const float ops_w = operators_width(ops.subspan(first, last - first - 1), gap) +
                        (first > 0 ? operators_width(ops.subspan(first - 1, 1), gap) : 0.0f);
    const std::vector<float> widths =
        term_widths(terms, first, last, width - ops_w - gap * static_cast<float>(last - first));
    if (widths.empty()) return std::numeric_limits<float>::infinity();
    for (std::size_t i = first; i < last; ++i)
      if (term_shows_numbers(terms[i])) worst = std::max(worst, (flow_width(terms[i], 0.0f) - 1) / widths[i - first]);
  }
  return worst;
}

// EquationFlow's lines; `result_leads`: the result is the first term (result_first), not the last.
EquationHover flow(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float cell,
                   bool result_leads) {
  EquationHover hover;
  ImGui::PushID(id);
  for (const FlowLine& l : flow_lines(terms, ops, cell, ImGui::GetContentRegionAvail().x))
    // Heatmaps scale their largest cell with the zoom: `cell` is in pixels already.
    draw_line(terms, ops,
              {.first = l.first,
               .last = l.last,
               .lead = l.first > 0 && leads(ops[l.first - 1]) ? &ops[l.first - 1] : nullptr,
               .height = l.height,
               .max_cell = cell * kBodyPixels / ImGui::GetFontSize(),
               .flow_cell = cell,
               .result_leads = result_leads},
              hover);
  ImGui::PopID();
  return hover;
}

// Whether the formula's result comes after "=" and would flow onto a line after the first, out of sight below its
// operands when the panel scrolls ("softmax by row →" has a direction, and is left as it is).
bool result_wraps(std::span<const Term> terms, std::span<const std::string> ops, float cell, float width) {
  return terms.size() >= 2 && ops.size() + 1 == terms.size() && ops.back() == "=" &&
         flow_lines(terms, ops, cell, width).front().last < terms.size();
}

// The formula led by its result, "scores = X · W_UQK · latentᵀ", so that what the step makes stays in sight: lesson 6
// page 4 showed three operands and no scores at 1280x720. Hovers name the terms as the caller gave them.
EquationHover result_first(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float cell) {
  const std::size_t n = terms.size();
  std::vector<Term> led{terms.back()};
  led.insert(led.end(), terms.begin(), terms.end() - 1);
  std::vector<std::string> led_ops{"="};
  led_ops.insert(led_ops.end(), ops.begin(), ops.end() - 1);
  EquationHover hover = flow(id, led, led_ops, cell, true);
  if (hover.term >= 0) hover.term = hover.term == 0 ? static_cast<int>(n) - 1 : hover.term - 1;
  return hover;
}

// The smallest flowing cell, in font heights: its number still fits inside it with a little room.
constexpr float kSmallestFlowCell = 1.2f;

// The height the flowing terms take at `cell`, led by their result where it would wrap (as `Equation` draws them).
float drawn_flow_height(std::span<const Term> terms, std::span<const std::string> ops, float cell, float width) {
  if (!result_wraps(terms, ops, cell, width)) return EquationFlowHeight(terms, ops, cell, width);
  std::vector<Term> led{terms.back()};
  led.insert(led.end(), terms.begin(), terms.end() - 1);
  std::vector<std::string> led_ops{"="};
  led_ops.insert(led_ops.end(), ops.begin(), ops.end() - 1);
  return EquationFlowHeight(led, led_ops, cell, width);
}

// The cell the terms flow at: the readable size where they fit the height, else the largest down to the smallest
// flowing cell that does (a whiteboard's hand writes smaller before the board scrolls: multi_head page 1's
// W_Q^(0) of 8 rows was cut by the bottom edge); 0 when none does.
float fitting_flow_cell(std::span<const Term> terms, std::span<const std::string> ops, float width, float max_height) {
  const float readable = 1.8f * ImGui::GetFontSize(), smallest = kSmallestFlowCell * ImGui::GetFontSize();
  if (drawn_flow_height(terms, ops, readable, width) <= max_height) return readable;
  if (drawn_flow_height(terms, ops, smallest, width) > max_height) return 0.0f;
  float lo = smallest, hi = readable;
  for (int k = 0; k < 12; ++k) {
    const float mid = (lo + hi) / 2;
    (drawn_flow_height(terms, ops, mid, width) <= max_height ? lo : hi) = mid;
  }
  return std::floor(lo);
}

}  // namespace

std::string shape_text(const Matrix& m) {
  return "[" + std::to_string(m.rows()) + "\u00D7" + std::to_string(m.cols()) + "]";
}

// The cell edge all terms of [first, last) would get on one line `line_h` pixels tall and `width` wide
// (0 when a term would be narrower than its labels and legend).
float line_cell(std::span<const Term> terms, std::span<const std::string> ops, std::size_t first, std::size_t last,
                float width, float line_h, float max_cell) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float avail = width - operators_width(ops.subspan(first, last - first - 1), gap) -
                      (first > 0 ? operators_width(ops.subspan(first - 1, 1), gap) : 0.0f);
  const float chrome = 3.5f * ImGui::GetTextLineHeightWithSpacing();  // title, column labels, legend
  // A term narrower than its labels (and legend) would spill out of the panel: such a line does not fit.
  const std::vector<float> widths = term_widths(terms, first, last, avail - gap * static_cast<float>(last - first));
  if (widths.empty()) return 0.0f;
  float cell = max_cell;
  for (std::size_t i = first; i < last; ++i) {
    const Term& t = terms[i];
    cell = std::min(cell, (widths[i - first] - 60.0f) / static_cast<float>(t.m->cols()));
    cell = std::min(cell, (line_h - chrome) / static_cast<float>(t.m->rows()));
  }
  return std::max(cell, 0.5f);  // it fits across, however small
}

namespace {

// How Equation lays out its terms in `width` x `max_height`: on `lines` fitted lines of cells `cell` wide, or
// flowing at a readable cell size.
struct EquationPlan {
  std::size_t lines = 1;
  float cell = 0;
  bool wants_numbers = false;
  float shortfall = 0;  // numbers_shortfall of the fitted lines
  bool flows = false;
};

EquationPlan plan_equation(std::span<const Term> terms, std::span<const std::string> ops, float width, float max_height,
                           float max_cell) {
  EquationPlan p;
  // As many lines as make the cells largest (many heads wrap onto several lines instead of shrinking
  // until no number fits, or running off the panel).
  const std::size_t n = terms.size();
  p.cell = line_cell(terms, ops, 0, n, width, max_height, max_cell);
  for (std::size_t lines = 2; lines <= std::min<std::size_t>(6, n); ++lines) {
    const std::size_t per_line = (n + lines - 1) / lines;
    const float line_h = max_height / static_cast<float>(lines);
    float cell = max_cell;
    for (std::size_t first = 0; first < n; first += per_line)
      cell = std::min(cell, line_cell(terms, ops, first, std::min(n, first + per_line), width, line_h, max_cell));
    if (cell > p.cell * 1.15f && (p.cell < kWrapBelowCell * 1.5f || p.cell <= 0.0f)) {  // only for a clear gain
      p.cell = cell;
      p.lines = lines;
    }
  }
  // Cells too small for a line of text while some term wants its numbers: one readable cell size instead, the
  // terms wrapping as text does and the view scrolling (the output step of four 4x8 heads at 1280x720).
  // Only where every such term then fits across (a 16x64 q of a model-sized layer does not: it stays compact).
  const float readable = 1.8f * ImGui::GetFontSize();
  p.wants_numbers = std::any_of(terms.begin(), terms.end(), term_shows_numbers) &&
                    std::all_of(terms.begin(), terms.end(), [&](const Term& t) {
                      return !term_shows_numbers(t) || flow_width(t, readable) <= width;
                    });
  const std::size_t per_line = (n + p.lines - 1) / p.lines;
  // A digit lost is worth the switch only where the flowing terms still fit the height: a result pushed below the
  // fold is worse than 0.74 for 0.738.
  const auto flow_fits = [&] {
    float h = 0;
    for (const FlowLine& l : flow_lines(terms, ops, readable, width)) h += l.height + ImGui::GetStyle().ItemSpacing.y;
    return h <= max_height;
  };
  // Well short (a tenth: 0.7 for 0.738, dots) is worth scrolling for.
  p.shortfall = p.wants_numbers ? numbers_shortfall(terms, ops, per_line, width) : 0.0f;
  p.flows = p.wants_numbers &&
            (p.cell < 1.2f * ImGui::GetFontSize() || p.shortfall > 1.1f || (p.shortfall > 1.0f && flow_fits()));
  return p;
}

}  // namespace

bool EquationFits(std::span<const Term> terms, std::span<const std::string> ops, float max_height, float max_cell) {
  const float width = ImGui::GetContentRegionAvail().x;
  const EquationPlan p = plan_equation(terms, ops, width, max_height, max_cell);
  if (p.flows) return fitting_flow_cell(terms, ops, width, max_height) > 0.0f;
  return p.shortfall <= 1.0f && p.cell >= ImGui::GetTextLineHeight();
}

EquationHover Equation(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float max_height,
                       float max_cell) {
  EquationHover hover;
  ImGui::PushID(id);
  const float width = ImGui::GetContentRegionAvail().x;
  const std::size_t n = terms.size();
  const EquationPlan plan = plan_equation(terms, ops, width, max_height, max_cell);
  const std::size_t best_lines = plan.lines, per_line = (n + best_lines - 1) / best_lines;
  const float readable = 1.8f * ImGui::GetFontSize();
  if (plan.flows) {
    ImGui::PopID();
    const float fitting = fitting_flow_cell(terms, ops, width, max_height);
    const float cell = fitting > 0.0f ? fitting : readable;  // nothing fits: readable, and the view scrolls
    if (result_wraps(terms, ops, cell, width)) return result_first(id, terms, ops, cell);
    return EquationFlow(id, terms, ops, cell);
  }
  // A line with a colour bar is taller by the bar, the others share the rest: every grid equally tall (draw_line
  // leaves the bar's room beside it).
  std::size_t bar_lines = 0;
  for (std::size_t first = 0; first < n; first += per_line)
    bar_lines += has_legend(terms, first, std::min(n, first + per_line)) ? 1 : 0;
  const float bar_h = best_lines > 1 ? legend_height(ImGui::GetTextLineHeight()) : 0.0f;
  const float line_h = (max_height - bar_h * static_cast<float>(bar_lines)) / static_cast<float>(best_lines) -
                       (best_lines > 1 ? ImGui::GetStyle().ItemSpacing.y : 0.0f);
  for (std::size_t first = 0; first < n; first += per_line) {
    const std::size_t last = std::min(n, first + per_line);
    draw_line(terms, ops,
              {.first = first,
               .last = last,
               .lead = first > 0 ? &ops[first - 1] : nullptr,
               .height = line_h + (has_legend(terms, first, last) ? bar_h : 0.0f),
               .max_cell = max_cell},
              hover);
  }
  ImGui::PopID();
  return hover;
}

EquationHover EquationFlow(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float cell) {
  return flow(id, terms, ops, cell, false);
}

float EquationFlowHeight(std::span<const Term> terms, std::span<const std::string> ops, float cell, float width) {
  float h = 0;
  for (const FlowLine& l : flow_lines(terms, ops, cell, width)) h += l.height + ImGui::GetStyle().ItemSpacing.y;
  return h;
}

}  // namespace attn::ui
