#include "ui/logic/layout_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include "core/text_format.h"
#include "ui/logic/colour_map.h"

namespace attn::ui {
namespace {

bool g_on = false;
std::vector<std::string>& reports() {
  static std::vector<std::string> r;
  return r;
}
std::string& lesson_text() {
  static std::string text;
  return text;
}
std::vector<SightItem>& sight_items() {
  static std::vector<SightItem> items;
  return items;
}
std::vector<ChartPlot>& chart_plots() {
  static std::vector<ChartPlot> charts;
  return charts;
}
std::vector<std::pair<int, int>>& outlined() {
  static std::vector<std::pair<int, int>> cells;
  return cells;
}

// A run: glyphs drawn one after another on one line under one clip rectangle (a label, a line of a paragraph).
struct Run {
  std::string text;
  double worst_contrast = 0;                 // 0: no glyph of it on a known background
  std::uint32_t colour = 0, background = 0;  // the worst glyph's
  float font_px = 0;
  std::vector<TextRect> visible;  // each glyph's part inside its clip rectangle
  TextRect box;                   // around every glyph, visible or not
  bool cut_x = false, cut_y = false;
};

bool same_clip(const TextRect& a, const TextRect& b) {
  return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
}

TextRect intersect(const TextRect& a, const TextRect& b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

// More than a pixel of overlap both ways: glyphs of neighbouring labels may touch, never cover each other.
bool overlaps(const TextRect& a, const TextRect& b) {
  const TextRect i = intersect(a, b);
  return i.x1 - i.x0 > 1.0f && i.y1 - i.y0 > 1.0f;
}

// by_colour: a run also ends where the colour or what lies under it changes (a highlighted tab in a menu bar).
std::vector<Run> runs_of(const DrawnText& w, bool by_colour = false) {
  std::vector<Run> runs;
  const DrawnGlyph* prev = nullptr;
  float height = 0;  // from the line's top to the lowest glyph bottom so far: a stand-in for the font size
  for (const DrawnGlyph& g : w.glyphs) {
    const float gap = prev ? g.box.x0 - prev->box.x1 : 0.0f;
    // Measured with this glyph too: a run that starts with a flat "-" has no height of its own yet.
    const float h = std::max(height, g.box.y1 - g.line_top);
    const bool joins = prev && std::abs(g.line_top - prev->line_top) <= 1.0f && same_clip(g.clip, prev->clip) &&
                       g.box.x0 >= prev->box.x0 - 1.0f && gap <= 2.5f * std::max(h, 1.0f) &&
                       (!by_colour || (g.colour == prev->colour && g.background == prev->background));
    if (!joins) {
      runs.push_back({});
      runs.back().box = g.box;
      height = 0;
    }
    Run& r = runs.back();
    if (joins && g.pen_x0 > prev->pen_x1 + 0.5f) r.text += ' ';  // spaces draw no glyph, but move the pen
    append_utf8(r.text, g.codepoint);
    height = std::max(height, g.box.y1 - g.line_top);
    r.box = {std::min(r.box.x0, g.box.x0), std::min(r.box.y0, g.box.y0), std::max(r.box.x1, g.box.x1),
             std::max(r.box.y1, g.box.y1)};
    if (g.background != 0 && g.colour != 0) {
      const double c = contrast_ratio(blend_over(g.colour, g.background), g.background);
      if (r.worst_contrast == 0 || c < r.worst_contrast) {
        r.worst_contrast = c;
        r.colour = g.colour;
        r.background = g.background;
        r.font_px = g.font_px;
      }
    }
    const TextRect v = intersect(g.box, g.clip);
    if (v.x1 > v.x0 && v.y1 > v.y0) r.visible.push_back(v);
    r.cut_x = r.cut_x || g.cut || g.box.x0 < g.clip.x0 - 1.0f || g.box.x1 > g.clip.x1 + 1.0f;
    r.cut_y = r.cut_y || g.box.y0 < g.clip.y0 - 1.0f || g.box.y1 > g.clip.y1 + 1.0f;
    prev = &g;
  }
  return runs;
}

// Which edge hides most of `box` from `visible`, with the pixels it hides ("bottom", 14).
std::pair<std::string, float> hiding_edge(const TextRect& box, const TextRect& visible) {
  const std::pair<std::string, float> edges[] = {{"bottom", box.y1 - visible.y1},
                                                 {"top", visible.y0 - box.y0},
                                                 {"right", box.x1 - visible.x1},
                                                 {"left", visible.x0 - box.x0}};
  return *std::max_element(edges, edges + 4, [](const auto& a, const auto& b) { return a.second < b.second; });
}

std::string sight_finding(const SightItem& item) {
  const float tolerance = 1.0f;  // a frame's half-pixel border may touch the edge
  const auto [edge, hidden] = hiding_edge(item.box, item.visible);
  if (hidden <= tolerance) return {};
  const bool vertical = edge == "bottom" || edge == "top";
  const float extent = vertical ? item.box.y1 - item.box.y0 : item.box.x1 - item.box.x0;
  const std::string named = item.kind == SightKind::Matrix ? ", which the lesson names," : "";
  const std::string where = item.window + ": " + item.what + named;
  if (hidden >= extent)
    return where + (edge == "bottom"  ? " below the bottom edge"
                    : edge == "top"   ? " above the top edge"
                    : edge == "right" ? " beyond the right edge"
                                      : " beyond the left edge");
  return where + " cut by the " + edge + " edge (" + std::to_string(static_cast<int>(std::lround(hidden))) + " of " +
         std::to_string(static_cast<int>(std::lround(extent))) + " px hidden)";
}

bool runs_overlap(const Run& a, const Run& b) {
  if (!overlaps(a.box, b.box)) return false;
  for (const TextRect& x : a.visible)
    for (const TextRect& y : b.visible)
      if (overlaps(x, y)) return true;
  return false;
}

std::string hex_colour(std::uint32_t rgba) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "#";
  for (const int shift : {0, 8, 16}) {
    const unsigned v = (rgba >> shift) & 0xFF;
    s += digits[v >> 4];
    s += digits[v & 0xF];
  }
  return s;
}

std::string ratio_text(double r) {
  const double floored = std::floor(r * 10) / 10;  // 4.49 is not 4.5
  std::string s = std::to_string(floored);
  return s.substr(0, s.find('.') + 2) + ":1";
}

std::vector<std::string>& line_contrast() {
  static std::vector<std::string> found;
  return found;
}
std::vector<std::string>& hidden_reports() {
  static std::vector<std::string> found;
  return found;
}

constexpr double kTextContrast = 4.5, kLargeTextContrast = 3.0, kLineContrast = 3.0;
constexpr float kLargeTextPx = 24.0f;

}  // namespace

double contrast_ratio(std::uint32_t a, std::uint32_t b) {
  // One WCAG formula for the lab, the colour map's: here on colours as ImGui packs them.
  const auto rgb = [](std::uint32_t c) {
    return Rgb{static_cast<float>(c & 0xFF) / 255.0f, static_cast<float>((c >> 8) & 0xFF) / 255.0f,
               static_cast<float>((c >> 16) & 0xFF) / 255.0f};
  };
  return attn::ui::contrast_ratio(rgb(a), rgb(b));
}

std::uint32_t blend_over(std::uint32_t top, std::uint32_t bottom) {
  const double alpha = static_cast<double>(top >> 24) / 255.0;
  std::uint32_t out = bottom & 0xFF000000u;
  for (const int shift : {0, 8, 16}) {
    const double t = (top >> shift) & 0xFF, b = (bottom >> shift) & 0xFF;
    out |= static_cast<std::uint32_t>(std::lround(alpha * t + (1 - alpha) * b)) << shift;
  }
  return out;
}

std::vector<std::string> contrast_problems(const std::vector<DrawnText>& windows) {
  std::set<std::string> found;
  for (const DrawnText& w : windows)
    for (const Run& r : runs_of(w, true)) {
      const double needed = r.font_px >= kLargeTextPx ? kLargeTextContrast : kTextContrast;
      if (r.worst_contrast > 0 && r.worst_contrast < needed)
        found.insert(w.window + ": text \"" + r.text + "\" " + hex_colour(blend_over(r.colour, r.background)) + " on " +
                     hex_colour(r.background) + ": contrast " + ratio_text(r.worst_contrast) + ", needs " +
                     ratio_text(needed));
    }
  return {found.begin(), found.end()};
}

void NoteLineContrast(std::string window, std::string what, std::uint32_t colour, std::uint32_t background) {
  if (!g_on) return;
  const std::uint32_t seen = blend_over(colour, background);
  const double r = contrast_ratio(seen, background);
  if (r < kLineContrast)
    line_contrast().push_back(window + ": " + what + " " + hex_colour(seen) + " on " + hex_colour(background) +
                              ": contrast " + ratio_text(r) + ", needs " + ratio_text(kLineContrast));
}
std::vector<std::string> TakeLineContrastProblems() { return std::exchange(line_contrast(), {}); }
void NoteHiddenStroke(std::string window, std::string what) {
  if (g_on) hidden_reports().push_back(window + ": " + what);
}
std::vector<std::string> TakeHiddenStrokes() { return std::exchange(hidden_reports(), {}); }

void SetLayoutCheck(bool on) { g_on = on; }
bool LayoutCheckOn() { return g_on; }

void ReportLayoutProblem(std::string where, std::string what) {
  if (g_on) reports().push_back(std::move(where) + ": " + std::move(what));
}

std::vector<std::string> TakeLayoutReports() { return std::exchange(reports(), {}); }

void NoteOutlinedCell(int row, int col) {
  if (g_on) outlined().emplace_back(row, col);
}
std::vector<std::pair<int, int>> TakeOutlinedCells() { return std::exchange(outlined(), {}); }

void NoteSightItem(SightItem item) {
  if (g_on) sight_items().push_back(std::move(item));
}
std::vector<SightItem> TakeSightItems() { return std::exchange(sight_items(), {}); }

void NoteChartPlot(ChartPlot chart) {
  if (g_on) chart_plots().push_back(std::move(chart));
}
std::vector<ChartPlot> TakeChartPlots() { return std::exchange(chart_plots(), {}); }

namespace {

// The height of the figure `c` is a panel of: the charts of its window plotted over the same x range (their plots'
// left and right edges within a pixel of its own), which read as one subject stacked over one axis.
float figure_height(const ChartPlot& c, const std::vector<ChartPlot>& charts) {
  float h = 0;
  for (const ChartPlot& o : charts)
    if (o.window == c.window && std::abs(o.plot.x0 - c.plot.x0) < 1 && std::abs(o.plot.x1 - c.plot.x1) < 1)
      h += o.plot.y1 - o.plot.y0;
  return h;
}

}  // namespace

std::vector<std::string> charts_too_small(const std::vector<ChartPlot>& charts, float window_w, float window_h) {
  const auto px = [](float v) { return std::to_string(static_cast<int>(std::lround(v))); };
  const float need_w = window_w / 3, need_h = window_h / 3;
  std::set<std::string> found;
  for (const ChartPlot& c : charts) {
    const float w = c.plot.x1 - c.plot.x0, h = c.plot.y1 - c.plot.y0;
    // A panel of a stacked figure: the figure a third high, each panel at least half that.
    const float figure_h = figure_height(c, charts);
    if (w + 0.5f >= need_w && (h + 0.5f >= need_h || (h + 0.5f >= need_h / 2 && figure_h + 0.5f >= need_h)))
      continue;  // a third of 1280 is 426.7: 427 px will do
    found.insert(c.window + ": chart \"" + c.title + "\" plots in " + px(w) + "\u00D7" + px(h) +
                 " px, under a third of the " + px(window_w) + "\u00D7" + px(window_h) + " window (" +
                 px(std::ceil(need_w)) + "\u00D7" + px(std::ceil(need_h)) + ")");
  }
  return {found.begin(), found.end()};
}

bool text_names(const std::string& text, const std::string& name) {
  if (name.empty()) return false;
  const auto word = [](unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; };
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    // Only the name's own ends are judged: "W_O" names W_O in "W_O's" and "(W_O)", not in "W_OV".
    const bool starts =
        at == 0 || !word(static_cast<unsigned char>(name[0])) || !word(static_cast<unsigned char>(text[at - 1]));
    const bool ends = end == text.size() || !word(static_cast<unsigned char>(name.back())) ||
                      !word(static_cast<unsigned char>(text[end]));
    if (starts && ends) return true;
  }
  return false;
}

namespace {

// "I (indexer)" is named by "I" too: the words in brackets describe the symbol, the text uses the symbol.
bool names_matrix(const std::string& text, const std::string& name) {
  const std::size_t bracket = name.find(" (");
  return text_names(text, name) || (bracket != std::string::npos && text_names(text, name.substr(0, bracket)));
}

}  // namespace

std::vector<std::string> items_out_of_sight(const std::vector<SightItem>& items, const std::string& lesson_text) {
  std::set<std::string> found;  // sorted, each once
  // A matrix drawn twice (a head's weights in the pipeline and among the thumbnails) is seen when one copy is.
  std::map<std::string, std::string> unseen_matrices;
  std::set<std::string> seen_matrices;
  for (const SightItem& item : items) {
    if (item.kind == SightKind::Matrix && !names_matrix(lesson_text, item.name)) continue;
    // A view's own: its user scrolls.
    if ((item.kind == SightKind::Verdict || item.kind == SightKind::Operand) && lesson_text.empty()) continue;
    std::string f = sight_finding(item);
    if (item.kind != SightKind::Matrix) {
      if (!f.empty()) found.insert(std::move(f));
    } else if (f.empty()) {
      seen_matrices.insert(item.name);
    } else {
      unseen_matrices.emplace(item.name, std::move(f));
    }
  }
  for (auto& [name, f] : unseen_matrices)
    if (!seen_matrices.contains(name)) found.insert(std::move(f));
  return {found.begin(), found.end()};
}

namespace {

// How much of stroke `a` lies within `reach` pixels of the line through `b`, inside b's extent, in pixels of a.
float length_along(const DrawnStroke& a, const DrawnStroke& b, float reach) {
  const float bx = b.x1 - b.x0, by = b.y1 - b.y0, b_len = std::hypot(bx, by);
  const float a_len = std::hypot(a.x1 - a.x0, a.y1 - a.y0);
  if (b_len < 1 || a_len < 1) return 0;
  const float ux = bx / b_len, uy = by / b_len;
  // a's ends in b's frame: t along b, d across it; a is straight, so both are linear in between.
  const auto t = [&](float x, float y) { return (x - b.x0) * ux + (y - b.y0) * uy; };
  const auto d = [&](float x, float y) { return -(x - b.x0) * uy + (y - b.y0) * ux; };
  const float t0 = t(a.x0, a.y0), t1 = t(a.x1, a.y1), d0 = d(a.x0, a.y0), d1 = d(a.x1, a.y1);
  // The share s in [0, 1] of a where |d| <= reach and 0 <= t <= b_len: an interval, as both are linear in s.
  float lo = 0, hi = 1;
  const auto keep = [&](float v0, float v1, float min, float max) {  // min <= v0 + (v1 - v0) s <= max
    if (std::abs(v1 - v0) < 1e-6f) {
      if (v0 < min || v0 > max) hi = -1;
      return;
    }
    float s0 = (min - v0) / (v1 - v0), s1 = (max - v0) / (v1 - v0);
    if (s0 > s1) std::swap(s0, s1);
    lo = std::max(lo, s0), hi = std::min(hi, s1);
  };
  keep(d0, d1, -reach, reach);
  keep(t0, t1, 0, b_len);
  return hi > lo ? (hi - lo) * a_len : 0;
}

}  // namespace

bool lie_on_each_other(const DrawnStroke& a, const DrawnStroke& b) {
  const float shorter = std::min(std::hypot(a.x1 - a.x0, a.y1 - a.y0), std::hypot(b.x1 - b.x0, b.y1 - b.y0));
  const float reach = std::max(a.width, b.width) * 0.5f + 1.0f;
  return shorter >= 4 && std::max(length_along(a, b, reach), length_along(b, a, reach)) >= 0.5f * shorter;
}

std::vector<std::string> hidden_strokes(const std::vector<DrawnStroke>& strokes,
                                        const std::vector<DrawnStroke>& grounds) {
  std::vector<std::string> found;
  // Alike: no channel apart by more than 24 of 255 (a hue apart reads as another line, whatever its luminance).
  const auto alike = [](std::uint32_t a, std::uint32_t b) {
    for (int shift = 0; shift < 24; shift += 8)
      if (std::abs(static_cast<int>((a >> shift) & 0xFFu) - static_cast<int>((b >> shift) & 0xFFu)) > 24) return false;
    return true;
  };
  for (std::size_t i = 0; i < strokes.size(); ++i) {
    const DrawnStroke& s = strokes[i];
    for (const DrawnStroke& g : grounds)
      if (alike(s.colour, g.colour) && lie_on_each_other(s, g)) found.push_back(s.name + " lies on " + g.name);
    for (std::size_t j = i + 1; j < strokes.size(); ++j) {
      const DrawnStroke& over = strokes[j];
      if ((over.width >= s.width - 0.5f || alike(over.colour, s.colour)) && lie_on_each_other(s, over))
        found.push_back(s.name + " lies under " + over.name);
    }
  }
  return found;
}

void NoteLessonText(std::string text) {
  if (g_on) lesson_text() = std::move(text);
}
std::string TakeLessonText() { return std::exchange(lesson_text(), {}); }

std::vector<std::string> quoted_decimals(const std::string& text) {
  static const std::regex number("(\u2212|-)?[0-9]+\\.[0-9]+");
  static const std::string minus = "\u2212", approx = "\u2248";
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    const std::size_t at = static_cast<std::size_t>(it->position());
    const std::string before = text.substr(at >= 4 ? at - 4 : 0, at >= 4 ? 4 : at);
    if ((at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) ||
        before.find(approx) != std::string::npos)
      continue;
    std::string quoted = it->str();
    if (quoted.starts_with(minus)) quoted = "-" + quoted.substr(minus.size());
    out.push_back(std::move(quoted));
  }
  return out;
}

std::vector<std::string> quotes_off_screen(const std::vector<DrawnText>& windows, const std::string& lesson_text) {
  // Numbers drawn in full anywhere, the lesson's own text included: a quote is on screen when the frame shows
  // it more often than the text says it.
  std::map<std::string, int> drawn, quoted;
  for (const DrawnText& w : windows)
    for (const Run& r : runs_of(w))
      if (!r.cut_x && !r.cut_y)
        for (const std::string& n : quoted_decimals(r.text)) ++drawn[n];
  for (const std::string& n : quoted_decimals(lesson_text)) ++quoted[n];
  std::vector<std::string> found;
  for (const auto& [n, times] : quoted)
    if (drawn[n] <= times) found.push_back("Lesson: the text quotes " + n + ", not on screen");
  return found;
}

std::vector<std::string> text_problems(const std::vector<DrawnText>& windows) {
  std::set<std::string> found;  // sorted, each once
  for (const DrawnText& w : windows) {
    const std::vector<Run> runs = runs_of(w);
    for (const Run& r : runs)
      if ((r.cut_x && !w.scrolls_x) || (r.cut_y && !w.scrolls_y))
        found.insert(w.window + ": text cut off: \"" + r.text + "\"");
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t j = i + 1; j < runs.size(); ++j)
        if (runs_overlap(runs[i], runs[j]))
          found.insert(w.window + ": \"" + runs[i].text + "\" drawn over \"" + runs[j].text + "\"");
  }
  return {found.begin(), found.end()};
}

}  // namespace attn::ui
